// Package mcpskills lays out a Workspace's winning skills as the MCP skills
// extension (io.modelcontextprotocol/skills) specifies, and serves them on
// an MCP server: every file of a skill is a skill://NAME/PATH resource read
// with resources/read, skills/list and skills/get give each skill's
// frontmatter and every file's digest and size, and
// resources/directory/read lists a directory. The files are the ones the
// materialized tree holds under skills/NAME (materialize.ReadSkillDir), so
// an MCP-only client reads the bytes Pi, Claude Code and Codex read.
//
// Containment is by construction: a URI is looked up, never interpreted as
// a path, among the URIs the catalog built from the skill's checked file
// paths. hostd owns when a catalog is served (internal/hostd).
package mcpskills

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

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/skillmd"
)

// Names of the MCP skills extension.
const (
	Extension                   = "io.modelcontextprotocol/skills"
	Scheme                      = "skill://"
	MethodList                  = "skills/list"
	MethodGet                   = "skills/get"
	MethodDirectoryRead         = "resources/directory/read"
	mimeDirectory               = "inode/directory"
	mimeMarkdown                = "text/markdown"
	ListPageSize                = 100
	DirectoryReadPageSize       = 200
	cacheScope                  = "private" // a Workspace's skills are not another's
	ttlMillis                   = 0         // a reload may change them at any time
	maxSkillFiles               = 512       // the extension's per-skill limits: a
	maxSkillBytes         int64 = 16 << 20  // skill over them is not served
)

// mcpSkill is one skill as the extension publishes it.
type mcpSkill struct {
	entry Entry
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

// Entry is the extension's Skill: the URI of its SKILL.md, its
// frontmatter as written, and every file of the skill once.
type Entry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []Resource      `json:"resources"`
}

type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Catalog is the skills one served context offers over MCP, by the
// URI of each SKILL.md, and the URIs in name order.
type Catalog struct {
	byURI map[string]*mcpSkill
	order []string
	// fileOwner maps every file URI to its skill's SKILL.md URI.
	fileOwner map[string]string
}

// Build lays out every skill of docs whose content source holds. One over
// the extension's limits, or whose SKILL.md has no frontmatter an MCP host
// could check, is left out with its reason returned.
func Build(ctx context.Context, docs []contract.SkillDoc, source materialize.ContentSource) (*Catalog, map[string]error) {
	cat := &Catalog{byURI: map[string]*mcpSkill{}, fileOwner: map[string]string{}}
	skipped := map[string]error{}
	for _, doc := range docs {
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
	if len(dir.Files) > maxSkillFiles {
		return nil, fmt.Errorf("%d files, over the %d an MCP skill may have", len(dir.Files), maxSkillFiles)
	}
	root := Scheme + name
	sk := &mcpSkill{files: map[string]skillFileRef{}, dirs: map[string][]*mcp.Resource{root: {}}}
	var total int64
	for _, f := range dir.Files {
		digest, err := fileDigest(f)
		if err != nil {
			return nil, err
		}
		total += f.Len()
		if total > maxSkillBytes {
			return nil, fmt.Errorf("over the %d bytes an MCP skill may hold", maxSkillBytes)
		}
		uri := root + "/" + f.Path
		sk.files[uri] = skillFileRef{file: f, digest: digest, mimeType: mimeOf(f.Path)}
		sk.entry.Resources = append(sk.entry.Resources, Resource{URI: uri, Digest: digest, Size: f.Len()})
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

type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type ListResult struct {
	mcp.ResultBase
	ResultType string  `json:"resultType"`
	Skills     []Entry `json:"skills"`
	NextCursor string  `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

type GetParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type GetResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	Skill      Entry  `json:"skill"`
	mcp.Cacheable
}

type DirectoryReadParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type DirectoryReadResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// Serving returns the catalog requests answer from, or why none is served
// (no context yet, a stale policy): the caller decides what is served.
type Serving func() (*Catalog, error)

// Register adds the extension's methods to srv, and the resource template
// every skill file is read through; it returns the handler that reads a
// skill file, for the SKILL.md resources the caller lists (Catalog.Listed).
// The caller declares the extension in its capabilities.
func Register(srv *mcp.Server, serving Serving) (mcp.ResourceHandler, error) {
	if err := mcp.AddReceivingCustomMethod(srv, MethodList, serving.list); err != nil {
		return nil, err
	}
	if err := mcp.AddReceivingCustomMethod(srv, MethodGet, serving.get); err != nil {
		return nil, err
	}
	if err := mcp.AddReceivingCustomMethod(srv, MethodDirectoryRead, serving.directoryRead); err != nil {
		return nil, err
	}
	// Every skill file, SKILL.md included, is read through one template;
	// each SKILL.md is also listed as a resource (Catalog.Listed).
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: Scheme + "{skill}/{+path}", Name: "skill-file",
		Description: "A file of one of the Workspace's skills (skills/list lists them with their digests)."}, serving.readFile)
	return serving.readFile, nil
}

func (serving Serving) list(_ context.Context, _ *mcp.ServerSession, p *ListParams) (*ListResult, error) {
	cat, err := serving()
	if err != nil {
		return nil, err
	}
	// The cursor is the last URI of the previous page: a reload between
	// pages neither repeats nor skips a skill that stayed.
	start := 0
	if p != nil && p.Cursor != "" {
		if !strings.HasPrefix(p.Cursor, Scheme) {
			return nil, invalidParams("skills/list: cursor %q was not issued by this server", p.Cursor)
		}
		start, _ = slices.BinarySearch(cat.order, p.Cursor)
		if start < len(cat.order) && cat.order[start] == p.Cursor {
			start++
		}
	}
	end := min(start+ListPageSize, len(cat.order))
	out := &ListResult{ResultType: "complete", Skills: []Entry{},
		Cacheable: mcp.Cacheable{TTLMs: ttlMillis, CacheScope: cacheScope}}
	for _, uri := range cat.order[start:end] {
		out.Skills = append(out.Skills, cat.byURI[uri].entry)
	}
	if end < len(cat.order) {
		out.NextCursor = cat.order[end-1]
	}
	return out, nil
}

func (serving Serving) get(_ context.Context, _ *mcp.ServerSession, p *GetParams) (*GetResult, error) {
	cat, err := serving()
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
	return &GetResult{ResultType: "complete", Skill: sk.entry,
		Cacheable: mcp.Cacheable{TTLMs: ttlMillis, CacheScope: cacheScope}}, nil
}

func (serving Serving) directoryRead(_ context.Context, _ *mcp.ServerSession, p *DirectoryReadParams) (*DirectoryReadResult, error) {
	cat, err := serving()
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
	end := min(start+DirectoryReadPageSize, len(children))
	out := &DirectoryReadResult{ResultType: "complete", Resources: slices.Clone(children[start:end])}
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
func (cat *Catalog) dirOwner(uri string) (*mcpSkill, bool) {
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return nil, false
	}
	name, _, _ := strings.Cut(rest, "/")
	sk, ok := cat.byURI[Scheme+name+"/"+materialize.SkillFile]
	if !ok {
		return nil, false
	}
	if _, isDir := sk.dirs[uri]; !isDir {
		return nil, false
	}
	return sk, true
}

// readFile serves resources/read for a skill file: text when the bytes are
// UTF-8 (so the text's bytes are the digested bytes), else a blob.
func (serving Serving) readFile(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	cat, err := serving()
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
		Cacheable: mcp.Cacheable{TTLMs: ttlMillis, CacheScope: cacheScope}}, nil
}

// Listed is how many skills the catalog lists as resources, and the i-th:
// its SKILL.md's URI and resource, named and described by its frontmatter.
func (cat *Catalog) Listed() (n int, at func(i int) (uri string, r *mcp.Resource)) {
	return len(cat.order), func(i int) (string, *mcp.Resource) {
		sk := cat.byURI[cat.order[i]]
		var fm struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		}
		_ = json.Unmarshal(sk.entry.Frontmatter, &fm)
		return sk.entry.URI, &mcp.Resource{URI: sk.entry.URI, Name: fm.Name, Description: fm.Description, MIMEType: mimeMarkdown,
			Size: sk.entry.Resources[0].Size}
	}
}

// Changed lists the file URIs of old whose bytes differ in cat, or that cat
// no longer serves: what subscribers get resources/updated for.
func (cat *Catalog) Changed(old *Catalog) []string {
	var out []string
	for uri, owner := range old.fileOwner {
		newOwner, ok := cat.fileOwner[uri]
		if ok && old.byURI[owner].files[uri].digest == cat.byURI[newOwner].files[uri].digest {
			continue
		}
		out = append(out, uri)
	}
	slices.Sort(out)
	return out
}

// Serves reports whether uri is a skill file the catalog serves.
func (cat *Catalog) Serves(uri string) bool {
	_, ok := cat.fileOwner[uri]
	return ok
}
