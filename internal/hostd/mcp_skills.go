package hostd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/skillmd"
	"github.com/loadout-dev/loadout/internal/sources"
)

// hostd's MCP endpoint serves the Workspace's winning skills as the MCP
// skills extension (io.modelcontextprotocol/skills) specifies: every file
// of a skill is a skill://NAME/PATH resource read with resources/read,
// skills/list and skills/get give each skill's frontmatter and every file's
// digest and size, and resources/directory/read lists a directory. The
// files are the ones the materialized tree holds under skills/NAME
// (materialize.ReadSkillDir), so an MCP-only client reads the bytes Pi,
// Claude Code and Codex read, and /v1/activate quotes.
//
// Containment is by construction: a URI is looked up, never interpreted as
// a path, among the URIs hostd built from the skill's checked file paths.

// Names of the MCP skills extension.
const (
	SkillsExtension             = "io.modelcontextprotocol/skills"
	skillScheme                 = "skill://"
	methodSkillsList            = "skills/list"
	methodSkillsGet             = "skills/get"
	methodDirectoryRead         = "resources/directory/read"
	mimeDirectory               = "inode/directory"
	mimeMarkdown                = "text/markdown"
	skillsListPageSize          = 100
	directoryReadPageSize       = 200
	skillsCacheScope            = "private" // a Workspace's skills are not another's
	skillsTTLMillis             = 0         // a reload may change them at any time
	maxMCPSkillFiles            = 512       // the extension's per-skill limits: a
	maxMCPSkillBytes      int64 = 16 << 20  // skill over them is not served
)

// mcpSkill is one skill as the extension publishes it.
type mcpSkill struct {
	entry skillEntry
	// files are the skill's files by URI; dirs maps each directory URI of
	// the skill (its root included) to its direct children, sorted by URI.
	files map[string]skillFileRef
	dirs  map[string][]*mcp.Resource
}

type skillFileRef struct {
	file     materialize.File
	digest   string
	mimeType string
}

// skillEntry is the extension's Skill: the URI of its SKILL.md, its
// frontmatter as written, and every file of the skill once.
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// skillCatalog is the skills one served snapshot offers over MCP, by the
// URI of each SKILL.md, and the URIs in name order.
type skillCatalog struct {
	byURI map[string]*mcpSkill
	order []string
	// fileOwner maps every file URI to its skill's SKILL.md URI.
	fileOwner map[string]string
}

// buildSkillCatalog lays out every skill of snap whose content hostd holds.
// A skill whose external source has not arrived is left out until it does;
// one over the extension's limits, or whose SKILL.md has no frontmatter an
// MCP host could check, is left out with its reason returned.
func buildSkillCatalog(ctx context.Context, snap *snapshot) (*skillCatalog, map[string]error) {
	cat := &skillCatalog{byURI: map[string]*mcpSkill{}, fileOwner: map[string]string{}}
	skipped := map[string]error{}
	source := sources.Content{Trees: snap.trees}
	for _, doc := range snap.context.Skills() {
		if doc.Source != nil {
			if _, ok := snap.trees[doc.Name]; !ok {
				continue
			}
		}
		dir, err := materialize.ReadSkillDir(ctx, source, doc)
		var sk *mcpSkill
		if err == nil {
			sk, err = newMCPSkill(doc.Name, dir)
		}
		if err != nil {
			skipped[doc.Name] = err
			continue
		}
		cat.byURI[sk.entry.URI] = sk
		cat.order = append(cat.order, sk.entry.URI)
		for uri := range sk.files {
			cat.fileOwner[uri] = sk.entry.URI
		}
	}
	slices.Sort(cat.order)
	return cat, skipped
}

// newMCPSkill publishes one skill's directory: every file's URI, digest
// and size, its directories, and its frontmatter as SKILL.md holds it.
func newMCPSkill(name string, dir materialize.SkillDir) (*mcpSkill, error) {
	if len(dir.Files) > maxMCPSkillFiles {
		return nil, fmt.Errorf("%d files, over the %d an MCP skill may have", len(dir.Files), maxMCPSkillFiles)
	}
	root := skillScheme + name
	sk := &mcpSkill{files: map[string]skillFileRef{}, dirs: map[string][]*mcp.Resource{root: {}}}
	var total int64
	for _, f := range dir.Files {
		digest, err := fileDigest(f)
		if err != nil {
			return nil, err
		}
		total += f.Len()
		if total > maxMCPSkillBytes {
			return nil, fmt.Errorf("over the %d bytes an MCP skill may hold", maxMCPSkillBytes)
		}
		uri := root + "/" + f.Path
		sk.files[uri] = skillFileRef{file: f, digest: digest, mimeType: mimeOf(f.Path)}
		sk.entry.Resources = append(sk.entry.Resources, skillResource{URI: uri, Digest: digest, Size: f.Len()})
		sk.addToDirs(root, f)
	}
	md, err := dir.Files[0].Bytes() // SKILL.md
	if err != nil {
		return nil, err
	}
	if sk.entry.Frontmatter, err = skillmd.FrontmatterObject(string(md)); err != nil {
		return nil, fmt.Errorf("SKILL.md: %w", err)
	}
	sk.entry.URI = root + "/" + materialize.SkillFile
	for d := range sk.dirs {
		slices.SortFunc(sk.dirs[d], func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) })
	}
	return sk, nil
}

// addToDirs lists f in its directory and each directory above it in its
// parent, up to the skill's root.
func (sk *mcpSkill) addToDirs(root string, f materialize.File) {
	child := &mcp.Resource{URI: root + "/" + f.Path, Name: path.Base(f.Path), MIMEType: mimeOf(f.Path), Size: f.Len()}
	for dir := path.Dir(f.Path); ; dir = path.Dir(dir) {
		parent := root
		if dir != "." {
			parent = root + "/" + dir
		}
		_, known := sk.dirs[parent]
		sk.dirs[parent] = append(sk.dirs[parent], child)
		if known || dir == "." {
			return
		}
		child = &mcp.Resource{URI: parent, Name: path.Base(dir), MIMEType: mimeDirectory}
	}
}

// fileDigest is the extension's digest of a file's raw bytes; a stored file
// carries the SHA-256 it was verified against.
func fileDigest(f materialize.File) (string, error) {
	if f.Stored != nil {
		return "sha256:" + hex.EncodeToString(f.Stored.SHA256[:]), nil
	}
	sum := sha256.Sum256(f.Content)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// mimeOf is a skill file's media type: Markdown for .md, else by extension,
// else bytes.
func mimeOf(p string) string {
	ext := path.Ext(p)
	if ext == ".md" {
		return mimeMarkdown
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// The extension's requests and results.

type skillsListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skillsListResult struct {
	mcp.ResultBase
	ResultType string       `json:"resultType"`
	Skills     []skillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

type skillsGetParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type skillsGetResult struct {
	mcp.ResultBase
	ResultType string     `json:"resultType"`
	Skill      skillEntry `json:"skill"`
	mcp.Cacheable
}

type directoryReadParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type directoryReadResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// registerMCPSkills declares the extension and adds its methods to the MCP
// server, and the resource template every skill file is read through.
func (s *Server) registerMCPSkills() error {
	srv := s.mcp.server
	if err := mcp.AddReceivingCustomMethod(srv, methodSkillsList, s.mcpSkillsList); err != nil {
		return err
	}
	if err := mcp.AddReceivingCustomMethod(srv, methodSkillsGet, s.mcpSkillsGet); err != nil {
		return err
	}
	if err := mcp.AddReceivingCustomMethod(srv, methodDirectoryRead, s.mcpDirectoryRead); err != nil {
		return err
	}
	// Every skill file, SKILL.md included, is read through one template;
	// each SKILL.md is also listed as a resource (syncMCPSkills).
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: skillScheme + "{skill}/{+path}", Name: "skill-file",
		Description: "A file of one of the Workspace's skills (skills/list lists them with their digests)."}, s.mcpReadSkillFile)
	return nil
}

// skillsServing is the catalog requests answer from, or the reason none is
// served: no context yet, or a stale policy (hostd then serves nothing).
func (s *Server) skillsServing() (*skillCatalog, error) {
	if err := s.policyRefused(); err != nil {
		return nil, err
	}
	cat := s.mcp.skills.Load()
	if cat == nil {
		return nil, fmt.Errorf("no context loaded yet")
	}
	return cat, nil
}

func (s *Server) mcpSkillsList(_ context.Context, _ *mcp.ServerSession, p *skillsListParams) (*skillsListResult, error) {
	cat, err := s.skillsServing()
	if err != nil {
		return nil, err
	}
	// The cursor is the last URI of the previous page: a reload between
	// pages neither repeats nor skips a skill that stayed.
	start := 0
	if p != nil && p.Cursor != "" {
		if !strings.HasPrefix(p.Cursor, skillScheme) {
			return nil, invalidParams("skills/list: cursor %q was not issued by this server", p.Cursor)
		}
		start, _ = slices.BinarySearch(cat.order, p.Cursor)
		if start < len(cat.order) && cat.order[start] == p.Cursor {
			start++
		}
	}
	end := min(start+skillsListPageSize, len(cat.order))
	out := &skillsListResult{ResultType: "complete", Skills: []skillEntry{},
		Cacheable: mcp.Cacheable{TTLMs: skillsTTLMillis, CacheScope: skillsCacheScope}}
	for _, uri := range cat.order[start:end] {
		out.Skills = append(out.Skills, cat.byURI[uri].entry)
	}
	if end < len(cat.order) {
		out.NextCursor = cat.order[end-1]
	}
	return out, nil
}

func (s *Server) mcpSkillsGet(_ context.Context, _ *mcp.ServerSession, p *skillsGetParams) (*skillsGetResult, error) {
	cat, err := s.skillsServing()
	if err != nil {
		return nil, err
	}
	if p == nil || p.URI == "" {
		return nil, invalidParams("skills/get: params.uri is required: the URI of a skill's SKILL.md")
	}
	sk, ok := cat.byURI[p.URI]
	if !ok {
		return nil, invalidParams("No skill is served at %s", p.URI)
	}
	return &skillsGetResult{ResultType: "complete", Skill: sk.entry,
		Cacheable: mcp.Cacheable{TTLMs: skillsTTLMillis, CacheScope: skillsCacheScope}}, nil
}

func (s *Server) mcpDirectoryRead(_ context.Context, _ *mcp.ServerSession, p *directoryReadParams) (*directoryReadResult, error) {
	cat, err := s.skillsServing()
	if err != nil {
		return nil, err
	}
	if p == nil || p.URI == "" {
		return nil, invalidParams("resources/directory/read: params.uri is required")
	}
	owner, ok := cat.dirOwner(p.URI)
	if !ok {
		return nil, invalidParams("%s is not a directory resource", p.URI)
	}
	children := owner.dirs[p.URI]
	start := 0
	if p.Cursor != "" {
		start, _ = slices.BinarySearchFunc(children, p.Cursor, func(r *mcp.Resource, c string) int { return strings.Compare(r.URI, c) })
		if start < len(children) && children[start].URI == p.Cursor {
			start++
		}
	}
	end := min(start+directoryReadPageSize, len(children))
	out := &directoryReadResult{ResultType: "complete", Resources: slices.Clone(children[start:end])}
	if out.Resources == nil {
		out.Resources = []*mcp.Resource{}
	}
	if end < len(children) {
		out.NextCursor = children[end-1].URI
	}
	return out, nil
}

// dirOwner finds the skill a directory URI belongs to: skill://NAME is the
// root, skill://NAME/DIR a directory below it.
func (cat *skillCatalog) dirOwner(uri string) (*mcpSkill, bool) {
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if !ok {
		return nil, false
	}
	name, _, _ := strings.Cut(rest, "/")
	sk, ok := cat.byURI[skillScheme+name+"/"+materialize.SkillFile]
	if !ok {
		return nil, false
	}
	if _, isDir := sk.dirs[uri]; !isDir {
		return nil, false
	}
	return sk, true
}

// mcpReadSkillFile serves resources/read for a skill file: text when the
// bytes are UTF-8 (so the text's bytes are the digested bytes), else a blob.
func (s *Server) mcpReadSkillFile(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	cat, err := s.skillsServing()
	if err != nil {
		return nil, err
	}
	uri := req.Params.URI
	owner, ok := cat.fileOwner[uri]
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	ref := cat.byURI[owner].files[uri]
	r, err := ref.file.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// A stored file verifies as it streams: content changed on disk since
	// it was fetched fails the read instead of serving other bytes.
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: ref.mimeType}
	if utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c},
		Cacheable: mcp.Cacheable{TTLMs: skillsTTLMillis, CacheScope: skillsCacheScope}}, nil
}

// syncMCPSkills brings the MCP server's skills to snap's: the catalog the
// methods answer from, each SKILL.md listed as a resource (clients get
// resources/list_changed when the set changes), and resources/updated for
// each subscribed file whose bytes changed. The caller holds s.mu.
func (s *Server) syncMCPSkills(ctx context.Context, snap *snapshot) {
	cat, skipped := buildSkillCatalog(ctx, snap)
	for name, err := range skipped {
		if prev := s.mcp.skipped[name]; prev == nil || prev.Error() != err.Error() {
			s.opts.Logger.Error("Skill not served over MCP", "skill", name, "error", err)
		}
	}
	s.mcp.skipped = skipped
	old := s.mcp.skills.Swap(cat)
	syncListed(s.mcp.skillResources, len(cat.order), func(i int) (string, string) {
		sk := cat.byURI[cat.order[i]]
		def, _ := json.Marshal(skillResourceOf(sk))
		return sk.entry.URI, string(def)
	}, s.mcp.server.RemoveResources, func(i int) {
		s.mcp.server.AddResource(skillResourceOf(cat.byURI[cat.order[i]]), s.mcpReadSkillFile)
	})
	if old == nil {
		return
	}
	for uri, owner := range old.fileOwner {
		newOwner, ok := cat.fileOwner[uri]
		if ok && old.byURI[owner].files[uri].digest == cat.byURI[newOwner].files[uri].digest {
			continue
		}
		_ = s.mcp.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// skillResourceOf is a skill's SKILL.md as resources/list lists it: named
// and described by its frontmatter.
func skillResourceOf(sk *mcpSkill) *mcp.Resource {
	var fm struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(sk.entry.Frontmatter, &fm)
	return &mcp.Resource{URI: sk.entry.URI, Name: fm.Name, Description: fm.Description, MIMEType: mimeMarkdown,
		Size: sk.entry.Resources[0].Size}
}

// subscribeSkill accepts subscriptions to the skill files hostd serves.
func (s *Server) subscribeSkill(_ context.Context, req *mcp.SubscribeRequest) error {
	cat := s.mcp.skills.Load()
	if cat == nil {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	if _, ok := cat.fileOwner[req.Params.URI]; !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return nil
}
