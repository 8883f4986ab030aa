package assets

import "errors"

// errNoFrontMatter: a workflow is its front matter (name, description,
// inputs) first; a file without it is not one.
var errNoFrontMatter = errors.New("no front matter: the file must start with a line '---', the YAML front matter, and a closing '---'")

// requireFrontMatter is splitFrontMatter for files that must have front
// matter: the front matter, the file line it starts on, the body and the
// line the body starts on.
func requireFrontMatter(data []byte) (front []byte, frontLine int, body []byte, bodyLine int, err error) {
	fm, err := splitFrontMatter(data)
	switch {
	case err != nil:
		return nil, 0, nil, 0, err
	case !fm.present:
		return nil, 0, nil, 0, errNoFrontMatter
	}
	return fm.yaml, fm.yamlLine, fm.body, fm.bodyLine, nil
}
