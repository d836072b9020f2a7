package hostd

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/mcpskills"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillmd"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// mcpSkillsClient is an MCP client of the official Go SDK that speaks the
// skills extension: its version has no skills helpers, so the extension's
// methods are sent as custom methods through the SDK's session.
type mcpSkillsClient struct {
	session *mcp.ClientSession
	updated chan string
	listed  chan struct{}
}

func connectMCPSkills(t *testing.T, base string) *mcpSkillsClient {
	t.Helper()
	c := &mcpSkillsClient{updated: make(chan string, 16), listed: make(chan struct{}, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "skills-test", Version: "v0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			c.updated <- req.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case c.listed <- struct{}{}:
			default:
			}
		},
	})
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*mcpskills.ListParams, *mcpskills.ListResult](client, mcpskills.MethodList),
		mcp.AddSendingCustomMethod[*mcpskills.GetParams, *mcpskills.GetResult](client, mcpskills.MethodGet),
		mcp.AddSendingCustomMethod[*mcpskills.DirectoryReadParams, *mcpskills.DirectoryReadResult](client, mcpskills.MethodDirectoryRead),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	session, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + MCPPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Close() })
	c.session = session
	return c
}

func (c *mcpSkillsClient) list(t *testing.T) []mcpskills.Entry {
	t.Helper()
	var all []mcpskills.Entry
	cursor := ""
	for range 50 {
		res, err := mcp.CallCustomMethod[*mcpskills.ListParams, *mcpskills.ListResult](t.Context(), c.session, mcpskills.MethodList, &mcpskills.ListParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("skills/list: %v", err)
		}
		if res.ResultType != "complete" || res.CacheScope != "private" {
			t.Fatalf("skills/list: resultType %q, cacheScope %q", res.ResultType, res.CacheScope)
		}
		all = append(all, res.Skills...)
		if cursor = res.NextCursor; cursor == "" {
			return all
		}
	}
	t.Fatal("skills/list: the cursor never ends")
	return nil
}

func (c *mcpSkillsClient) read(t *testing.T, uri string) (text string, blob []byte) {
	t.Helper()
	res, err := c.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("resources/read %s: contents %+v", uri, res.Contents)
	}
	return res.Contents[0].Text, res.Contents[0].Blob
}

// readListed reads the listed resource r and checks that its bytes (the
// text, or the blob of a binary file) have the digest and size the listing
// gave; it returns the text and those bytes.
func (c *mcpSkillsClient) readListed(t *testing.T, r mcpskills.Resource) (text string, raw []byte) {
	t.Helper()
	text, blob := c.read(t, r.URI)
	raw = []byte(text)
	if blob != nil {
		raw = blob
	}
	if digestOf(raw) != r.Digest || int64(len(raw)) != r.Size {
		t.Errorf("%s: read %d bytes digest %s; listed %d bytes %s", r.URI, len(raw), digestOf(raw), r.Size, r.Digest)
	}
	return text, raw
}

func isInvalidParams(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams
}

var binaryLogo = []byte{0x89, 'P', 'N', 'G', 0xff, 0x00, 0xfe}

func pdfSkill(body string) contract.SkillDoc {
	return contract.SkillDoc{Name: "pdf-processing", Description: "Extract, fill, and assemble PDF documents", Origin: "project",
		License: "Apache-2.0", Metadata: map[string]string{"team": "docs"}, Body: body,
		Files: []contract.FileDoc{
			{Path: "templates/invoice.md", Content: "# Invoice\n"},
			{Path: "templates/regional/eu.md", Content: "# EU\n"},
			{Path: "assets/logo.png", Content: base64.StdEncoding.EncodeToString(binaryLogo), Encoding: contract.EncodingBase64},
			{Path: "scripts/extract.sh", Content: "#!/bin/sh\necho hi\n", Executable: true},
		}}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// An MCP client of the official SDK lists a skill with skills/list, gets
// it with skills/get and reads every file with resources/read: the body of
// SKILL.md and every text file are the bytes /v1/activate gives, binary
// files come as blobs, and every digest and size is that of the bytes read.
// The files are the ones the materialized tree holds.
func TestMCPSkills_ListGetAndReadGiveTheBytesOfActivate(t *testing.T) {
	s, ts, dir := newTestServer(t, fixedRegistry())
	reloadWith(t, s, dir, withSkills(t, contextData(t, fixedRegistry()), pdfSkill("Choose the matching template from `templates/`.\n")))
	c := connectMCPSkills(t, ts.URL)

	ext := c.session.InitializeResult().Capabilities.Extensions[mcpskills.Extension]
	if settings, ok := ext.(map[string]any); !ok || settings["directoryRead"] != true {
		t.Fatalf("initialize declares %s as %#v, want {directoryRead: true}", mcpskills.Extension, ext)
	}

	listed := c.list(t)
	if len(listed) != 1 || listed[0].URI != "skill://pdf-processing/SKILL.md" {
		t.Fatalf("skills/list: %+v", listed)
	}
	entry := listed[0]
	var fm map[string]any
	if err := json.Unmarshal(entry.Frontmatter, &fm); err != nil {
		t.Fatal(err)
	}
	if fm["name"] != "pdf-processing" || fm["description"] != "Extract, fill, and assemble PDF documents" || fm["license"] != "Apache-2.0" {
		t.Fatalf("frontmatter %s", entry.Frontmatter)
	}

	got, err := mcp.CallCustomMethod[*mcpskills.GetParams, *mcpskills.GetResult](t.Context(), c.session, mcpskills.MethodGet, &mcpskills.GetParams{URI: entry.URI})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(got.Skill)
	b, _ := json.Marshal(entry)
	if string(a) != string(b) {
		t.Fatalf("skills/get differs from skills/list:\n%s\n%s", a, b)
	}

	var activated resources.ActivatedSkill
	if code := post(t, ts.URL+"/v1/activate", ActivateRequest{Skill: "pdf-processing",
		Files: []string{"templates/invoice.md", "templates/regional/eu.md", "scripts/extract.sh"}}, &activated); code != 200 {
		t.Fatalf("/v1/activate: %d", code)
	}
	activatedFiles := map[string]string{}
	for _, f := range activated.Files {
		activatedFiles[f.Request] = f.Content
	}

	wantURIs := []string{"skill://pdf-processing/SKILL.md", "skill://pdf-processing/assets/logo.png",
		"skill://pdf-processing/scripts/extract.sh", "skill://pdf-processing/templates/invoice.md",
		"skill://pdf-processing/templates/regional/eu.md"}
	if len(entry.Resources) != len(wantURIs) {
		t.Fatalf("resources %+v, want %v", entry.Resources, wantURIs)
	}
	tree := materializedSkill(t, s, "pdf-processing")
	for i, r := range entry.Resources {
		if r.URI != wantURIs[i] {
			t.Fatalf("resources[%d] = %s, want %s", i, r.URI, wantURIs[i])
		}
		text, raw := c.readListed(t, r)
		rel := strings.TrimPrefix(r.URI, "skill://pdf-processing/")
		if string(tree[rel]) != string(raw) {
			t.Errorf("%s: MCP serves %q, the materialized tree holds %q", r.URI, raw, tree[rel])
		}
		switch rel {
		case "SKILL.md":
			// The frontmatter, a blank line, then the body byte for byte.
			if _, _, err := skillmd.Split(text); err != nil || !strings.HasSuffix(text, "---\n\n"+activated.Body) {
				t.Errorf("SKILL.md %q (%v) does not end with the /v1/activate body %q", text, err, activated.Body)
			}
		case "assets/logo.png":
			if string(raw) != string(binaryLogo) || text != "" {
				t.Errorf("binary file: text %q blob %x", text, raw)
			}
		default:
			if text != activatedFiles[rel] {
				t.Errorf("%s: MCP %q, /v1/activate %q", rel, text, activatedFiles[rel])
			}
		}
	}

	// resources/list names each SKILL.md by its frontmatter.
	all, err := c.session.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Resources) != 1 || all.Resources[0].URI != entry.URI || all.Resources[0].Name != "pdf-processing" ||
		all.Resources[0].MIMEType != "text/markdown" || all.Resources[0].Description == "" {
		t.Fatalf("resources/list: %+v", all.Resources)
	}
}

// materializedSkill is a skill's directory as materialize.Build lays it out
// from the served context: what Pi, Claude Code and Codex read.
func materializedSkill(t *testing.T, s *Server, name string) map[string][]byte {
	t.Helper()
	in, err := materialize.InputFrom(s.current.Load().context)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := materialize.Build(t.Context(), in, materialize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range tree.Files() {
		if rel, ok := strings.CutPrefix(f.Path, materialize.SkillsDir+"/"+name+"/"); ok {
			out[rel] = f.Content
		}
	}
	return out
}

// resources/directory/read lists a directory's direct children, files with
// their metadata and subdirectories as inode/directory, and refuses what is
// not a directory with -32602.
func TestMCPSkills_DirectoryRead(t *testing.T) {
	s, ts, dir := newTestServer(t, fixedRegistry())
	reloadWith(t, s, dir, withSkills(t, contextData(t, fixedRegistry()), pdfSkill("Body\n")))
	c := connectMCPSkills(t, ts.URL)
	read := func(uri string) ([]string, error) {
		res, err := mcp.CallCustomMethod[*mcpskills.DirectoryReadParams, *mcpskills.DirectoryReadResult](t.Context(), c.session, mcpskills.MethodDirectoryRead, &mcpskills.DirectoryReadParams{URI: uri})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.URI+" "+r.MIMEType)
		}
		return out, nil
	}
	for uri, want := range map[string]string{
		"skill://pdf-processing": "skill://pdf-processing/SKILL.md text/markdown,skill://pdf-processing/assets inode/directory," +
			"skill://pdf-processing/scripts inode/directory,skill://pdf-processing/templates inode/directory",
		"skill://pdf-processing/templates":          "skill://pdf-processing/templates/invoice.md text/markdown,skill://pdf-processing/templates/regional inode/directory",
		"skill://pdf-processing/templates/regional": "skill://pdf-processing/templates/regional/eu.md text/markdown",
	} {
		got, err := read(uri)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s:\n got %s\nwant %s", uri, strings.Join(got, ","), want)
		}
	}
	for _, uri := range []string{"skill://pdf-processing/SKILL.md", "skill://pdf-processing/", "skill://pdf-processing/templates/",
		"skill://nope", "skill://pdf-processing/missing", "file:///etc", "skill://pdf-processing/templates/../assets"} {
		if _, err := read(uri); !isInvalidParams(err) {
			t.Errorf("%s: %v, want -32602", uri, err)
		}
	}
}

// A URI is looked up, never resolved as a path: traversal, encodings and
// other skills' names reach nothing, and skills/get answers -32602 for
// anything but a served skill's SKILL.md.
func TestMCPSkills_ContainmentAndUnknownSkills(t *testing.T) {
	s, ts, dir := newTestServer(t, fixedRegistry())
	reloadWith(t, s, dir, withSkills(t, contextData(t, fixedRegistry()), pdfSkill("Body\n")))
	c := connectMCPSkills(t, ts.URL)
	for _, uri := range []string{
		"skill://pdf-processing/../pdf-processing/SKILL.md", "skill://pdf-processing/templates/../SKILL.md",
		"skill://pdf-processing/%2e%2e/SKILL.md", "skill://pdf-processing//SKILL.md", "skill://pdf-processing/./SKILL.md",
		"skill://pdf-processing/templates%2Finvoice.md", "skill://PDF-processing/SKILL.md", "skill://pdf-processing/SKILL.md/",
		"skill://pdf-processing", "skill://other/SKILL.md", "skill:///etc/passwd",
	} {
		if _, err := c.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}); !isInvalidParams(err) {
			t.Errorf("resources/read %s: %v, want -32602", uri, err)
		}
	}
	for _, uri := range []string{"skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md", "skill://pdf-processing",
		"skill://pdf-processing/templates/invoice.md", ""} {
		if _, err := mcp.CallCustomMethod[*mcpskills.GetParams, *mcpskills.GetResult](t.Context(), c.session, mcpskills.MethodGet, &mcpskills.GetParams{URI: uri}); !isInvalidParams(err) {
			t.Errorf("skills/get %q: %v, want -32602", uri, err)
		}
	}
	if _, err := mcp.CallCustomMethod[*mcpskills.ListParams, *mcpskills.ListResult](t.Context(), c.session, mcpskills.MethodList, &mcpskills.ListParams{Cursor: "forged"}); !isInvalidParams(err) {
		t.Errorf("skills/list with a forged cursor: %v, want -32602", err)
	}
}

// A reload that changes a skill's bytes tells a subscribed client
// (resources/updated), one that adds a skill changes the resource list
// (resources/list_changed), and the next reads serve the new bytes with
// their new digest.
func TestMCPSkills_ReloadNotifiesAndServesTheNewBytes(t *testing.T) {
	s, ts, dir := newTestServer(t, fixedRegistry())
	base := contextData(t, fixedRegistry())
	reloadWith(t, s, dir, withSkills(t, base, pdfSkill("First body\n")))
	c := connectMCPSkills(t, ts.URL)
	const uri = "skill://pdf-processing/SKILL.md"
	if err := c.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	before := c.list(t)[0].Resources[0].Digest

	second := contract.SkillDoc{Name: "git-workflow", Description: "Follow the team's Git conventions", Origin: "project", Body: "Branch per change.\n"}
	reloadWith(t, s, dir, withSkills(t, base, pdfSkill("Second body\n"), second))
	select {
	case got := <-c.updated:
		if got != uri {
			t.Fatalf("resources/updated for %s, want %s", got, uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/updated after the skill's bytes changed")
	}
	select {
	case <-c.listed:
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/list_changed after a skill was added")
	}
	listed := c.list(t)
	if len(listed) != 2 || listed[0].URI != "skill://git-workflow/SKILL.md" {
		t.Fatalf("skills/list after reload: %+v", listed)
	}
	after := listed[1].Resources[0].Digest
	text, _ := c.read(t, uri)
	if after == before || digestOf([]byte(text)) != after || !strings.Contains(text, "Second body") {
		t.Fatalf("after the reload: digest %s (was %s), read %q", after, before, text)
	}
}

// skills/list pages never split a skill, and every skill is listed once.
func TestMCPSkills_ListPages(t *testing.T) {
	s, ts, dir := newTestServer(t, fixedRegistry())
	var many []contract.SkillDoc
	for i := range mcpskills.ListPageSize*2 + 5 {
		many = append(many, contract.SkillDoc{Name: "skill-" + strings.Repeat("a", 1+i/26) + string(rune('a'+i%26)),
			Description: "A skill", Origin: "project", Body: "Body\n"})
	}
	reloadWith(t, s, dir, withSkills(t, contextData(t, fixedRegistry()), many...))
	listed := connectMCPSkills(t, ts.URL).list(t)
	seen := map[string]bool{}
	for _, e := range listed {
		if seen[e.URI] {
			t.Fatalf("%s listed twice", e.URI)
		}
		seen[e.URI] = true
	}
	if len(seen) != len(many) {
		t.Fatalf("listed %d skills over the pages, want %d", len(seen), len(many))
	}
}

// An external skill is served over MCP once its pinned artifact has arrived
// and verified: SKILL.md is the artifact's own, byte for byte, and a file
// kept in the verified cache on disk is listed with the digest it was
// verified against and read with the same bytes.
func TestMCPSkills_ExternalSkillServedOnceItsSourceArrives(t *testing.T) {
	skillMD := []byte("---\nname: pdf\ndescription: Reads PDFs.\nx-owner: docs-team\n---\nEXTERNAL-BODY\n")
	ref := pushSkill(t, "pdf", skillpack.Tree{
		{Path: "SKILL.md", Mode: skillpack.ModeFile, Content: skillMD},
		{Path: "bin/tool", Mode: skillpack.ModeExecutable, Content: binaryLogo},
	})
	ctxDir := t.TempDir()
	writeExternalContext(t, ctxDir, ref)
	s := New(Options{ContextDir: ctxDir, SkillSources: cachedSources(t), Logger: quietLogger()})
	t.Cleanup(s.wait)
	if err := s.Reload(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	s.wait()
	ts := testnet.ServeHandler(t, s.Handler())
	c := connectMCPSkills(t, ts.URL)
	var listed []mcpskills.Entry
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if listed = c.list(t); len(listed) == 1 {
			break
		}
	}
	if len(listed) != 1 || listed[0].URI != "skill://pdf/SKILL.md" || !strings.Contains(string(listed[0].Frontmatter), `"x-owner":"docs-team"`) {
		t.Fatalf("skills/list: %+v", listed)
	}
	for _, r := range listed[0].Resources {
		text, _ := c.readListed(t, r)
		if r.URI == "skill://pdf/SKILL.md" && text != string(skillMD) {
			t.Errorf("SKILL.md %q, the artifact's %q", text, skillMD)
		}
	}
}
