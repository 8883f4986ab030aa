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
	// WhenToUse, ArgumentHint, Model and DisableModelInvocation are
	// Claude Code's keys (agentKeys), kept as written: when_to_use joins
	// the description a model sees; disable-model-invocation is shown,
	// not enforced (a project's policy says which tools a model calls).
	WhenToUse              string `json:"when_to_use,omitempty"`
	ArgumentHint           string `json:"argument_hint,omitempty"`
	Model                  string `json:"model,omitempty"`
	DisableModelInvocation bool   `json:"disable_model_invocation,omitempty"`
	Source                 Source `json:"source"`
	// BodyLine is the 1-based line of SKILL.md where the body starts.
	BodyLine int `json:"body_line"`

	dataDir string
	maxSize int64
}

// skillFrontMatter is SKILL.md's front matter as written: the Agent
// Skills specification's fields, and the ones Claude Code adds to them
// (argument-hint, model, agentKeys), so a skill written for either loads
// unchanged. A key neither knows is a diagnostic (it says to put extra
// data under metadata) rather than silently ignored: it is most often a
// misspelt one.
type skillFrontMatter struct {
	Name          *string           `yaml:"name"`
	Description   *string           `yaml:"description"`
	License       string            `yaml:"license"`
	Compatibility string            `yaml:"compatibility"`
	Metadata      map[string]string `yaml:"metadata"`
	AllowedTools  toolList          `yaml:"allowed-tools"`
	ArgumentHint  string            `yaml:"argument-hint"`
	Model         string            `yaml:"model"`
	Agent         agentKeys         `yaml:",inline"`
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
				reason += " (a skill's front matter holds name, description, license, compatibility, metadata, allowed-tools, and Claude Code's argument-hint, model, " + agentKeyList + "; put other data under metadata)"
			}
			return bad(fe.Line, "%s", reason)
		}
		return bad(fm.yamlLine, "%v", err)
	}
	var diags []Diagnostic
	add := func(format string, args ...any) {
		diags = append(diags, Diagnostic{File: rel, Line: fm.yamlLine, Reason: fmt.Sprintf(format, args...)})
	}
	name := folder
	switch {
	case m.Name == nil:
		// Claude Code names a skill by its folder when the front matter
		// does not.
		if reason := checkSkillName(folder); reason != "" {
			add("front matter has no name, and the folder's name %q %s: add name: with a valid name, and rename the folder to it", folder, reason)
		}
	default:
		name = *m.Name
		if reason := checkSkillName(name); reason != "" {
			add("name %q %s", name, reason)
		} else if name != folder {
			add("name %q does not match its folder %q: rename one so they are equal", name, folder)
		}
	}
	description := ""
	if m.Description != nil {
		description = strings.TrimSpace(*m.Description)
	}
	if description == "" {
		// Claude Code takes the body's first paragraph.
		description = firstParagraph(fm.body)
	}
	switch {
	case description == "":
		add("front matter has no description: add one saying what the skill does and when to use it")
	case utf8.RuneCountInString(description) > maxSkillDescription:
		add("description is %d characters, over the %d allowed: shorten it", utf8.RuneCountInString(description), maxSkillDescription)
	}
	if n := utf8.RuneCountInString(m.Compatibility); n > maxSkillCompatibility {
		add("compatibility is %d characters, over the %d allowed: shorten it", n, maxSkillCompatibility)
	}
	if len(diags) > 0 {
		return "", nil, diags
	}
	return name, &Skill{
		Name:                   name,
		Description:            description,
		License:                m.License,
		Compatibility:          m.Compatibility,
		Metadata:               m.Metadata,
		AllowedTools:           []string(m.AllowedTools),
		WhenToUse:              m.Agent.WhenToUse,
		ArgumentHint:           m.ArgumentHint,
		Model:                  m.Model,
		DisableModelInvocation: m.Agent.DisableModelInvocation,
		Source:                 src,
		BodyLine:               fm.bodyLine,
		dataDir:                l.dataDir,
		maxSize:                l.opts.MaxFileSize,
	}, nil
}

// firstParagraph is the first paragraph of a markdown body that is text
// (headings, fences and blank lines skipped), its lines joined by blanks:
// the description Claude Code gives a skill whose front matter has none.
func firstParagraph(body []byte) string {
	var para []string
	fenced := false
	for rest := body; len(rest) > 0; {
		line, next, _ := cutLine(rest)
		rest = next
		t := strings.TrimSpace(string(line))
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fenced = !fenced
			if len(para) > 0 {
				return strings.Join(para, " ")
			}
		case fenced:
		case t == "" || strings.HasPrefix(t, "#"):
			if len(para) > 0 {
				return strings.Join(para, " ")
			}
		default:
			para = append(para, t)
		}
	}
	return strings.Join(para, " ")
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
