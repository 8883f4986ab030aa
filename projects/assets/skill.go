package assets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf8"
)

// Limits of the Agent Skills format (agentskills.io specification).
const (
	maxSkillName          = 64
	maxSkillDescription   = 1024
	maxSkillCompatibility = 500
)

// Skill is a skill in the Agent Skills format: the folder
// skills/<name>/ holding SKILL.md, whose YAML front matter names and
// describes it. Only the front matter is held; Body reads the
// instructions when a skill is used, so a project of many skills costs
// its metadata, not its text.
//
// A Skill is immutable; it is only ever built valid (see loadSkill).
type Skill struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	// AllowedTools is the spec's space-delimited allowed-tools, split;
	// entries like "Bash(git add:*)" keep their inner blanks.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	Source       Source   `json:"source"`
	// BodyLine is the 1-based line of SKILL.md where the body starts.
	BodyLine int `json:"body_line"`

	dataDir string
	maxSize int64
}

// skillFrontMatter is SKILL.md's front matter as written. The
// specification lists exactly these fields and its reference validator
// refuses any other, so an unknown key is a diagnostic (it says to put
// extra data under metadata) rather than silently ignored.
type skillFrontMatter struct {
	Name          *string           `yaml:"name"`
	Description   *string           `yaml:"description"`
	License       string            `yaml:"license"`
	Compatibility string            `yaml:"compatibility"`
	Metadata      map[string]string `yaml:"metadata"`
	AllowedTools  toolList          `yaml:"allowed-tools"`
}

// ErrChanged is wrapped by Skill.Body when SKILL.md no longer holds the
// bytes that were loaded: the caller should reload the asset set rather
// than hand out instructions that do not match the listed skill.
var ErrChanged = errors.New("asset file changed since it was loaded")

// Body reads SKILL.md again and returns the markdown after its front
// matter. It fails with ErrChanged when the file's content hash differs
// from Source.Hash (edited, replaced or removed since the load).
func (s *Skill) Body() (string, error) {
	root, err := os.OpenRoot(s.dataDir)
	if err != nil {
		return "", fmt.Errorf("skill %s: open data dir %s: %w", s.Name, s.dataDir, err)
	}
	defer root.Close()
	fi, err := root.Lstat(s.Source.File)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("no longer a regular file")
	}
	var data []byte
	if err == nil {
		data, err = readCapped(rootFS{root}, s.Source.File, s.maxSize)
	}
	if err != nil {
		return "", fmt.Errorf("skill %s: %s: %w (%w): reload the project's assets", s.Name, s.Source.File, ErrChanged, err)
	}
	if h := hashHex(data); h != s.Source.Hash {
		return "", fmt.Errorf("skill %s: %s: %w (sha256 %.12s, loaded %.12s): reload the project's assets", s.Name, s.Source.File, ErrChanged, h, s.Source.Hash)
	}
	fm, err := splitFrontMatter(data)
	if err != nil { // cannot happen for bytes that loaded; kept for safety
		return "", fmt.Errorf("skill %s: %s: %w", s.Name, s.Source.File, err)
	}
	return string(fm.body), nil
}

// skillFile is the file every skill folder must hold.
const skillFile = "SKILL.md"

// loadSkills walks skills/: each folder is one skill. Other entries at the
// top of skills/ are diagnostics, hidden ones (".git") are skipped, and
// what a skill folder holds besides SKILL.md (scripts/, references/) is
// its own business and not walked.
func (l *loader) loadSkills() []named {
	var claims []named
	budget := l.opts.MaxFilesPerKind
	_, err := l.readDir("skills", &budget, func(e fs.DirEntry) {
		name := e.Name()
		if hidden(name) {
			return
		}
		dir := "skills/" + name
		if e.Type()&fs.ModeSymlink != 0 {
			l.diag(dir, 0, "is a symlink; a skill must be a folder inside the data dir: replace the link with the folder")
			return
		}
		if !e.IsDir() {
			l.diag(dir, 0, "is not a skill: a skill is a folder skills/<name>/ holding %s", skillFile)
			return
		}
		rel := dir + "/" + skillFile
		fi, err := l.fs.lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			l.diag(dir, 0, "has no %s: add one, or remove the folder", skillFile)
			return
		}
		if err != nil {
			l.diag(rel, 0, "cannot be read: %v", err)
			return
		}
		r := l.file(rel, fi, l.parseSkill)
		if r.asset != nil {
			claims = append(claims, named{key: r.name, name: r.name, rel: rel, asset: r.asset})
		}
	})
	if errors.Is(err, errTooMany) {
		l.tooMany("skills")
	} else if err != nil {
		l.diag("skills", 0, "cannot be listed: %v", err)
	}
	return claims
}

// parseSkill validates one SKILL.md (rel is skills/<folder>/SKILL.md).
func (l *loader) parseSkill(rel string, data []byte, src Source) (string, any, []Diagnostic) {
	folder := path.Base(path.Dir(rel))
	bad := func(line int, format string, args ...any) (string, any, []Diagnostic) {
		return "", nil, []Diagnostic{{File: rel, Line: line, Reason: fmt.Sprintf(format, args...)}}
	}
	fm, err := splitFrontMatter(data)
	if err != nil {
		var fe *frontMatterError
		errors.As(err, &fe)
		return bad(fe.Line, "%s", fe.Reason)
	}
	if !fm.present {
		return bad(1, "has no front matter: start the file with ---, name: %s, description: ..., ---", folder)
	}
	var m skillFrontMatter
	if err := decodeFrontMatter(fm, &m); err != nil {
		var fe *frontMatterError
		if errors.As(err, &fe) {
			reason := fe.Reason
			if strings.Contains(reason, "unknown field") {
				reason += " (a skill's front matter holds name, description, license, compatibility, metadata and allowed-tools; put other data under metadata)"
			}
			return bad(fe.Line, "%s", reason)
		}
		return bad(fm.yamlLine, "%v", err)
	}
	var diags []Diagnostic
	add := func(format string, args ...any) {
		diags = append(diags, Diagnostic{File: rel, Line: fm.yamlLine, Reason: fmt.Sprintf(format, args...)})
	}
	switch {
	case m.Name == nil:
		add("front matter has no name: add name: %s", folder)
	default:
		if reason := checkSkillName(*m.Name); reason != "" {
			add("name %q %s", *m.Name, reason)
		} else if *m.Name != folder {
			add("name %q does not match its folder %q: rename one so they are equal", *m.Name, folder)
		}
	}
	switch {
	case m.Description == nil || strings.TrimSpace(*m.Description) == "":
		add("front matter has no description: add one saying what the skill does and when to use it")
	case utf8.RuneCountInString(*m.Description) > maxSkillDescription:
		add("description is %d characters, over the %d allowed: shorten it", utf8.RuneCountInString(*m.Description), maxSkillDescription)
	}
	if n := utf8.RuneCountInString(m.Compatibility); n > maxSkillCompatibility {
		add("compatibility is %d characters, over the %d allowed: shorten it", n, maxSkillCompatibility)
	}
	if len(diags) > 0 {
		return "", nil, diags
	}
	return *m.Name, &Skill{
		Name:          *m.Name,
		Description:   *m.Description,
		License:       m.License,
		Compatibility: m.Compatibility,
		Metadata:      m.Metadata,
		AllowedTools:  []string(m.AllowedTools),
		Source:        src,
		BodyLine:      fm.bodyLine,
		dataDir:       l.dataDir,
		maxSize:       l.opts.MaxFileSize,
	}, nil
}

// checkSkillName returns why name breaks the Agent Skills name rule
// (1–64 of a-z, 0-9 and '-', no leading, trailing or double '-'), or "".
func checkSkillName(name string) string {
	switch {
	case name == "":
		return "is empty: use 1 to 64 lowercase letters, digits and hyphens"
	case len(name) > maxSkillName:
		return fmt.Sprintf("is %d characters, over the %d allowed", len(name), maxSkillName)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return "starts or ends with a hyphen"
	case strings.Contains(name, "--"):
		return "holds a double hyphen"
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Sprintf("holds %q: use only lowercase letters, digits and hyphens", r)
		}
	}
	return ""
}

// toolList is allowed-tools as written: the specification's
// space-delimited string ("Bash(git:*) Read"), the comma-separated string
// slash commands use, or a YAML list. Separators inside parentheses are
// part of the entry, so "Bash(git add:*)" stays one tool.
type toolList []string

// UnmarshalYAML accepts a string or a list of strings.
func (t *toolList) UnmarshalYAML(unmarshal func(any) error) error {
	var list []string
	if err := unmarshal(&list); err == nil {
		*t = list
		return nil
	}
	var s string
	if err := unmarshal(&s); err != nil {
		return fmt.Errorf("allowed-tools must be a string or a list of strings")
	}
	*t = splitTools(s)
	return nil
}

func splitTools(s string) []string {
	var out []string
	depth, start := 0, -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, s[start:end])
			start = -1
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ' ' || r == '\t' || r == '\n' || r == ','):
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return out
}
