package materialize

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/skillfile"
)

// Top-level names of a materialized tree. Each is a symlink through DataLink
// into the current generation.
const (
	SkillsDir  = "skills"
	PromptsDir = "prompts"
	// AgentsFile is the platform's text (Memory.Platform), the same as
	// CLAUDE.md: Codex reads it as its global instructions.
	AgentsFile = "AGENTS.md"
	// WorkspacePromptFile is the platform's part of an agent's system
	// prompt for agents that keep their own (Pi): the platform's
	// instructions and active skills, its extensions' prompt guides and the
	// denied tools (Memory.Platform). Claude Code's CLAUDE.md and Codex's
	// AGENTS.md hold the same text.
	WorkspacePromptFile = "workspace-prompt.md"
	// ProjectPromptFile is the tenants' text (Memory.Project): their
	// instructions, active skills and prompt guides, each under a heading
	// naming its namespace and saying it is project content. No managed
	// file includes it: Pi adds it to its prompt's project section, Claude
	// Code and Codex get it from hostd as SessionStart context.
	ProjectPromptFile = "project-prompt.md"
	SystemPromptFile  = contract.KeySystemPrompt // the published keys, as they are
	// ManifestFile is the context's manifest.json (contract.Manifest): which
	// skills are active, the templates' variables, the tool registry. An
	// agent reads it from the same generation as the files it describes.
	ManifestFile = contract.KeyManifest
	// SkillFile is the file of a skill directory that Build writes itself.
	SkillFile = "SKILL.md"
)

// Default limits: a skill file as large as an external artifact may carry,
// and a tree that still fits an emptyDir comfortably.
const (
	DefaultMaxFileBytes int64 = 16 << 20
	DefaultMaxTreeBytes int64 = 256 << 20
	DefaultMaxFiles           = 100_000
	// maxSegmentBytes and maxPathBytes keep every path writable on common
	// filesystems (NAME_MAX 255, and well under PATH_MAX with OUT prefixed).
	maxSegmentBytes = 255
	maxPathBytes    = 1024
)

// Input is the published context, parsed: what a tree is built from.
type Input struct {
	// Hash is the context hash, named in errors.
	Hash         string
	SystemPrompt string
	// Instructions are the instructions in the Workspace's order, each
	// with its provenance.
	Instructions []Instruction
	// Manifest is manifest.json.
	Manifest contract.Manifest
	// Skills are the winning skills; Templates the winning templates.
	Skills    []contract.SkillDoc
	Templates []contract.TemplateDoc
}

// Instruction is one instruction with its provenance (published.Instruction).
type Instruction = published.Instruction

// InputFrom takes a tree's input from a loaded published context.
func InputFrom(pc *published.Context) (Input, error) {
	instructions, err := pc.Instructions()
	if err != nil {
		return Input{}, fmt.Errorf("materialize context %s: %w", pc.Hash, err)
	}
	return Input{
		Hash:         pc.Hash,
		SystemPrompt: pc.SystemPrompt,
		Instructions: instructions,
		Manifest:     pc.Manifest(),
		Skills:       pc.Skills(),
		Templates:    pc.Templates(),
	}, nil
}

// Limits bound what a tree may hold; zero fields take the defaults.
type Limits struct {
	MaxFileBytes int64
	MaxTreeBytes int64
	MaxFiles     int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxTreeBytes <= 0 {
		l.MaxTreeBytes = DefaultMaxTreeBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// Options configure Build.
type Options struct {
	// Source supplies each skill's body and files; nil means InlineContent.
	Source ContentSource
	// ClaudeCode adds the Claude Code layout (claudecode.go, docs/agents.md).
	ClaudeCode bool
	// Codex writes the Codex layout for OUT at CODEX_HOME: each skill is a
	// link in a skills directory Codex shares, plus Codex's hooks.json and
	// requirements.toml (see codexLayout and docs/agents.md#codex).
	Codex bool
	// ManagedEtc writes the tree a bound pod mounts whole, read-only, as
	// Claude Code's /etc/claude-code and Codex's /etc/codex: the Claude Code
	// layout, .claude/skills and .claude/commands for Claude Code's managed
	// skills and commands, Codex's requirements.toml and config.toml (hostd's
	// MCP server), and every hook naming the tree's own program with hostd's
	// URL, so a stock agent image needs nothing of Loadout's (etc.go,
	// docs/agents.md#every-agent-in-a-bound-pod). It implies ClaudeCode and
	// replaces Codex: /etc/codex is not CODEX_HOME.
	ManagedEtc bool
	// HostdURL is hostd's base URL in the Claude Code managed settings;
	// empty means DefaultHostdURL.
	HostdURL string
	Limits   Limits
}

// File is one file of a tree (and of a skill's content): the project's one
// file shape. In a tree, Path is slash-separated and relative to the
// generation directory.
type File = skillfile.File

// Tree is a built, validated tree: its files sorted by path, the top-level
// links and a digest of both. Same input, same tree, same digest.
type Tree struct {
	files []File
	links []string
	// genLinks are symbolic links inside the generation (ManagedEtc's
	// .claude/skills -> ../skills), written after its files.
	genLinks []GenLink
	digest   string
	// codex is the Codex layout: skills are linked one by one into
	// OUT/skills, whose names are in skills.
	codex  bool
	skills []string
}

// Files returns the tree's files in path order.
func (t *Tree) Files() []File { return slices.Clone(t.files) }

// Links returns the top-level names linked into the generation.
func (t *Tree) Links() []string { return slices.Clone(t.links) }

// Digest is the hex SHA-256 of the tree's paths, modes, contents (a stored
// file's by its SHA-256) and links.
func (t *Tree) Digest() string { return t.digest }

// Build lays a context out as files. It is pure apart from what the content
// source does; every name and size is checked here, so writing cannot fail
// on what the context holds.
func Build(ctx context.Context, in Input, opts Options) (*Tree, error) {
	if opts.Source == nil {
		opts.Source = InlineContent{}
	}
	b := &builder{limits: opts.Limits.withDefaults(), hash: in.Hash, seen: map[string]bool{}}
	b.add(SystemPromptFile, []byte(in.SystemPrompt), 0o644)
	manifest, err := json.MarshalIndent(in.Manifest, "", "  ")
	if err != nil {
		return nil, b.errorf("%s: %w", ManifestFile, err)
	}
	b.add(ManifestFile, append(manifest, '\n'), 0o644)

	skills, bodies, err := b.addSkills(ctx, in.Skills, opts.Source)
	if err != nil {
		return nil, err
	}
	if err := b.addTemplates(in.Templates); err != nil {
		return nil, err
	}

	// The Workspace's text, split by authority and written once: the
	// platform's part is what an agent may treat as organisation policy
	// (the Pi package's system prompt addition, Codex's AGENTS.md, Claude
	// Code's managed CLAUDE.md); the tenants' part is project content in a
	// file none of them includes.
	active, err := activeSkills(in.Manifest, skills, bodies)
	if err != nil {
		return nil, b.errorf("%w", err)
	}
	memory := composeMemory(in.Instructions, in.Manifest, active)
	b.add(WorkspacePromptFile, []byte(memory.Platform), 0o644)
	b.add(ProjectPromptFile, []byte(memory.Project), 0o644)
	b.add(AgentsFile, []byte(memory.Platform), 0o644)

	links := []string{AgentsFile, ManifestFile, ProjectPromptFile, PromptsDir, SkillsDir, SystemPromptFile, WorkspacePromptFile}
	claudeProgram := "loadout"
	if opts.ManagedEtc {
		opts.ClaudeCode, opts.Codex = true, false
		claudeProgram = path.Join(EtcClaudeCode, ManagedEtcHookProgram)
	}
	if opts.ClaudeCode {
		if err := b.addClaudeCode(in, memory.Platform, opts.HostdURL, claudeProgram, opts.ManagedEtc); err != nil {
			return nil, b.errorf("%w", err)
		}
		links = append(links, claudeCodeLinks...)
		slices.Sort(links)
	}
	if opts.Codex {
		links = codexLayout(b, links, in.Manifest.Registry.Sandbox)
		if b.err != nil {
			return nil, b.errorf("%w", b.err)
		}
	}
	if opts.ManagedEtc {
		links = managedEtcLayout(b, links, opts.HostdURL, memory.Platform, in.Manifest.Registry.Sandbox)
		if b.err != nil {
			return nil, b.errorf("%w", b.err)
		}
	}
	slices.SortFunc(b.files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	if err := skillfile.CheckNoFileUnderFile(b.files); err != nil {
		return nil, b.errorf("%w", err)
	}
	t := &Tree{files: b.files, links: links, genLinks: b.genLinks, digest: digest(b.files, links, b.genLinks), codex: opts.Codex}
	if opts.Codex {
		t.skills = skillNames(b.files)
	}
	return t, nil
}

// addSkills lays out every skill under skills/NAME (ReadSkillDir), in name
// order, and returns the skills sorted and their content by name, which the
// memory texts quote.
func (b *builder) addSkills(ctx context.Context, in []contract.SkillDoc, source ContentSource) ([]contract.SkillDoc, map[string]SkillContent, error) {
	bodies := map[string]SkillContent{}
	skills := slices.Clone(in)
	slices.SortFunc(skills, func(a, b contract.SkillDoc) int { return strings.Compare(a.Name, b.Name) })
	for i, s := range skills {
		if i > 0 && skills[i-1].Name == s.Name {
			return nil, nil, b.errorf("skill %q: listed twice", s.Name)
		}
		sd, err := ReadSkillDir(ctx, source, s)
		if err != nil {
			return nil, nil, b.errorf("%w", err)
		}
		bodies[s.Name] = sd.Content
		dir := path.Join(SkillsDir, s.Name)
		for _, f := range sd.Files {
			f.Path = path.Join(dir, f.Path)
			b.addFile(f)
		}
		if b.err != nil {
			return nil, nil, b.errorf("skill %q: %w", s.Name, b.err)
		}
	}
	return skills, bodies, nil
}

// addTemplates writes every template as a Pi prompt template under
// prompts/NAME.md, in name order.
func (b *builder) addTemplates(in []contract.TemplateDoc) error {
	templates := slices.Clone(in)
	slices.SortFunc(templates, func(a, b contract.TemplateDoc) int { return strings.Compare(a.Name, b.Name) })
	for i, t := range templates {
		if err := checkName("template", t.Name); err != nil {
			return b.errorf("%w", err)
		}
		if i > 0 && templates[i-1].Name == t.Name {
			return b.errorf("template %q: listed twice", t.Name)
		}
		md, err := promptMarkdown(t)
		if err != nil {
			return b.errorf("template %q: %w", t.Name, err)
		}
		b.add(path.Join(PromptsDir, t.Name+".md"), md, 0o644)
	}
	if b.err != nil {
		return b.errorf("%w", b.err)
	}
	return nil
}

// builder collects files and the first size error.
type builder struct {
	genLinks []GenLink
	limits   Limits
	hash     string
	files    []File
	seen     map[string]bool
	total    int64
	err      error
}

func (b *builder) add(p string, content []byte, mode skillfile.Mode) {
	b.addFile(File{Path: p, Content: content, Mode: mode})
}

// addFile adds a file as it is: a skill's file keeps its content in memory
// or stored on disk, to be streamed when written.
func (b *builder) addFile(f File) {
	if b.err != nil {
		return
	}
	switch n := f.Len(); {
	case b.seen[f.Path]:
		b.err = fmt.Errorf("file %q: listed twice", f.Path)
	case n > b.limits.MaxFileBytes:
		b.err = fmt.Errorf("file %q: %d bytes, over the %d-byte limit per file", f.Path, n, b.limits.MaxFileBytes)
	case b.total+n > b.limits.MaxTreeBytes:
		b.err = fmt.Errorf("file %q: the tree would hold more than its %d-byte limit", f.Path, b.limits.MaxTreeBytes)
	case len(b.files) >= b.limits.MaxFiles:
		b.err = fmt.Errorf("file %q: the tree would hold more than its %d-file limit", f.Path, b.limits.MaxFiles)
	default:
		b.seen[f.Path] = true
		b.total += n
		b.files = append(b.files, f)
	}
}

// errorf names the context in a build error and clears the pending error.
func (b *builder) errorf(format string, args ...any) error {
	b.err = nil
	if b.hash != "" {
		return fmt.Errorf("materialize context %s: "+format, append([]any{b.hash}, args...)...)
	}
	return fmt.Errorf("materialize: "+format, args...)
}

// logicalName is rule R-SK-1's name rule, which is also the Agent Skills
// rule: the name becomes a directory (skills) or a file name (prompts), so a
// context that breaks it (hand-written, or from a hostile source) is refused
// before anything is written.
var logicalName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func checkName(kind, name string) error {
	if len(name) > 64 || !logicalName.MatchString(name) || strings.Contains(name, "--") {
		return fmt.Errorf("%s %q: name is not a safe file name (1-64 of [a-z0-9-], no leading, trailing or double hyphen)", kind, name)
	}
	return nil
}

// checkFilePath accepts a relative, slash-separated path whose every segment
// is a plain, printable name.
func checkFilePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case len(p) > maxPathBytes:
		return fmt.Errorf("path is %d bytes, over %d", len(p), maxPathBytes)
	case !utf8.ValidString(p):
		return fmt.Errorf("path is not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path must be relative")
	case strings.Contains(p, `\`):
		return fmt.Errorf("path must use '/' separators")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("path holds a control character %U", r)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return fmt.Errorf("path has an empty, '.' or '..' segment")
		case len(seg) > maxSegmentBytes:
			return fmt.Errorf("path segment is %d bytes, over %d", len(seg), maxSegmentBytes)
		}
	}
	return nil
}

// digest hashes each file's path, mode and content; a stored file's content
// by the SHA-256 verified with it, so a digest never reads a large file.
func digest(files []File, links []string, genLinks []GenLink) string {
	h := sha256.New()
	var n [8]byte
	for _, f := range files {
		binary.BigEndian.PutUint64(n[:], uint64(len(f.Path)))
		h.Write(n[:])
		h.Write([]byte(f.Path))
		binary.BigEndian.PutUint64(n[:], uint64(f.Mode))
		h.Write(n[:])
		binary.BigEndian.PutUint64(n[:], uint64(f.Len()))
		h.Write(n[:])
		if f.Stored != nil {
			h.Write([]byte{1}) // marks a content hash, never equal to content
			h.Write(f.Stored.SHA256[:])
			continue
		}
		h.Write([]byte{0})
		h.Write(f.Content)
	}
	h.Write([]byte(strings.Join(links, "\x00")))
	for _, l := range genLinks {
		h.Write([]byte("\x00\x01" + l.Path + "\x00" + l.Target))
	}
	return hex.EncodeToString(h.Sum(nil))
}
