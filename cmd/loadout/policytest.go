package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/published"
)

// testOptions are the flags of `loadout test`.
type testOptions struct {
	base, head   []string
	output       string
	failOnChange bool
	preview      previewOptions
}

// replayCall is one entry of CALLS: a tool call or a session event's prompt.
type replayCall struct {
	// Name labels the call in the output; default "#N tool" or "#N event".
	Name string `json:"name,omitempty"`
	// Workspace is "namespace/name"; empty: every Workspace.
	Workspace string         `json:"workspace,omitempty"`
	Tool      string         `json:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Event     string         `json:"event,omitempty"`
	Prompt    string         `json:"prompt,omitempty"`
}

// verdict is what one context's hooks decided on a call.
type verdict struct {
	// Verdict: allowed, ask, blocked (a tool call); allowed, ask, stopped
	// (an event); absent (no such Workspace on this side).
	Verdict   string `json:"verdict"`
	Extension string `json:"extension,omitempty"`
	Hook      string `json:"hook,omitempty"`
	Message   string `json:"message,omitempty"`
	// Arguments is the digest of the arguments (or prompt) as they would
	// run, after every rewrite.
	Arguments string `json:"arguments,omitempty"`
}

func (v verdict) String() string {
	s := v.Verdict
	if v.Hook != "" {
		s += " (" + v.Extension + "/" + v.Hook + ")"
	}
	return s
}

// strength orders verdicts: a head verdict weaker than base's is a weakened
// guard.
func (v verdict) strength() int {
	switch v.Verdict {
	case "blocked", "stopped":
		return 2
	case "ask":
		return 1
	}
	return 0
}

// change is a call whose verdict differs between base and head.
type change struct {
	Call      string  `json:"call"`
	Workspace string  `json:"workspace"`
	Base      verdict `json:"base"`
	Head      verdict `json:"head"`
	// Weakened: denied (or asked) at base, let through at head.
	Weakened bool `json:"weakened"`
}

func newTestCommand() *cobra.Command {
	o := &testOptions{}
	cmd := &cobra.Command{
		Use:   "test --base DIR --head DIR CALLS",
		Short: "Replay calls against two versions of the manifests and print the verdicts that change",
		Long: `Preview both sets of manifests (as 'loadout preview -f' does), run each call
of CALLS through both contexts' hooks with the code hostd runs, and print the
calls whose verdict changes, as a table or, with -o json, as JSON.

CALLS is a YAML or JSON list. A tool call is {tool, arguments}; a session
event is {event, prompt} (event UserInput, BeforeAgentStart, SessionStart,
...). A call with workspace: NAMESPACE/NAME runs for that Workspace only;
without, for every Workspace. name: labels it in the output.

CALLS may also be hostd's decision ledger (its log, or --ledger-file): each
BeforeToolCall record and prompt event that carries its arguments or prompt
(an extension with recordArguments judged it) is replayed for its
Workspace, named by chain#seq; records with digests only are counted on
stderr.

The verdict is hostd's: the Workspace's denied tools, a runnable tool's input
schema, then the before hooks in order (allowed, ask or blocked, and the
arguments as rewritten); for an event, allowed, ask or stopped. Webhook hooks
are not called (their Service is not reachable from CI): each fails, which
blocks, on both sides alike.

Exits 1 whenever a call denied or asked at base is let through at head (a
weakened guard) and, with --fail-on-change, on any change. Prints nothing and
exits 0 when no verdict changes.`,
		Example: `  loadout test --base base/config --head config calls.yaml
  loadout test --base base/config --head config calls.yaml --fail-on-change -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.base, "base", nil, "manifests of the base (file or directory, repeatable, as preview -f), e.g. the target branch's checkout")
	f.StringArrayVar(&o.head, "head", nil, "manifests of the head (file or directory, repeatable, as preview -f), e.g. the pull request's")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	f.BoolVar(&o.failOnChange, "fail-on-change", false, "exit 1 on any changed verdict, not only on a weakened guard")
	f.StringVarP(&o.preview.namespace, "namespace", "n", "default", "namespace of objects that have none")
	f.StringSliceVar(&o.preview.platform, "platform-namespace", []string{"loadout-system"}, "platform namespaces")
	f.StringVar(&o.preview.defaultTrust, "default-trust", string(vocab.TrustRestricted), "trust of project namespaces without a loadout.dev/trust label")
	_ = cmd.MarkFlagRequired("base")
	_ = cmd.MarkFlagRequired("head")
	return cmd
}

func (o *testOptions) run(ctx context.Context, callsFile string, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.output != "table" && o.output != outputJSON {
		return fmt.Errorf("--output %q: must be table or json", o.output)
	}
	calls, err := readReplayCalls(callsFile, stderr)
	if err != nil {
		return err
	}
	base, err := o.hosts(ctx, o.base, stderr)
	if err != nil {
		return fmt.Errorf("--base %s: %w", strings.Join(o.base, ","), err)
	}
	head, err := o.hosts(ctx, o.head, stderr)
	if err != nil {
		return fmt.Errorf("--head %s: %w", strings.Join(o.head, ","), err)
	}
	var names []string
	for ws := range base {
		names = append(names, ws)
	}
	for ws := range head {
		if _, ok := base[ws]; !ok {
			names = append(names, ws)
		}
	}
	slices.Sort(names)
	var changes []change
	for i, c := range calls {
		label := c.Name
		if label == "" {
			label = fmt.Sprintf("#%d %s%s", i+1, c.Tool, c.Event)
		}
		targets := names
		if c.Workspace != "" {
			if !slices.Contains(names, c.Workspace) {
				return fmt.Errorf("call %s: workspace %s is in neither the base nor the head (%s)", label, c.Workspace, strings.Join(names, ", "))
			}
			targets = []string{c.Workspace}
		}
		for _, ws := range targets {
			b, err := base[ws].decide(ctx, c)
			if err != nil {
				return fmt.Errorf("call %s: base: %w", label, err)
			}
			h, err := head[ws].decide(ctx, c)
			if err != nil {
				return fmt.Errorf("call %s: head: %w", label, err)
			}
			if b != h {
				changes = append(changes, change{Call: label, Workspace: ws, Base: b, Head: h, Weakened: h.strength() < b.strength()})
			}
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if err := writeChanges(stdout, o.output, changes); err != nil {
		return err
	}
	var weakened []string
	for _, c := range changes {
		if c.Weakened {
			weakened = append(weakened, fmt.Sprintf("%s in %s (%s at base, %s at head)", c.Call, c.Workspace, c.Base, c.Head))
		}
	}
	if len(weakened) > 0 {
		return fmt.Errorf("the head weakens a guard: %d calls stopped at base get through at head: %s", len(weakened), strings.Join(weakened, "; "))
	}
	if o.failOnChange {
		return fmt.Errorf("--fail-on-change: %d verdicts change", len(changes))
	}
	return nil
}

func writeChanges(w io.Writer, format string, changes []change) error {
	if format == outputJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"changes": changes})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKSPACE\tCALL\tBASE\tHEAD\tCHANGE")
	for _, c := range changes {
		kind := "changed"
		switch {
		case c.Weakened:
			kind = "WEAKENED"
		case c.Head.strength() > c.Base.strength():
			kind = "tightened"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Workspace, c.Call, c.Base, c.Head, kind)
	}
	return tw.Flush()
}

func readReplayCalls(path string, stderr io.Writer) ([]replayCall, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if isLedger(raw) {
		return ledgerCalls(path, raw, stderr)
	}
	var calls []replayCall
	if err := yaml.UnmarshalStrict(raw, &calls); err != nil {
		return nil, fmt.Errorf("%s: a list of {tool, arguments} or {event, prompt}: %w", path, err)
	}
	for i, c := range calls {
		if (c.Tool == "") == (c.Event == "") {
			return nil, fmt.Errorf("%s: call %d: give tool or event, not both or neither", path, i+1)
		}
	}
	return calls, nil
}

// replayHost is one Workspace's context as hostd loads it.
type replayHost struct {
	host    *exthost.Host
	schemas map[string]*exthost.InputSchema
}

// hosts previews the manifests in dirs and loads each Workspace's context
// into a host, as hostd does (loadSnapshot, buildTools).
func (o *testOptions) hosts(ctx context.Context, dirs []string, stderr io.Writer) (map[string]*replayHost, error) {
	p := o.preview
	p.files = dirs
	// Only preview's warnings: its notes on what it read would bury the
	// verdicts in a CI log.
	var notes bytes.Buffer
	cms, err := p.fromManifests(&notes)
	for _, l := range strings.SplitAfter(notes.String(), "\n") {
		if strings.HasPrefix(l, "warning: ") {
			fmt.Fprint(stderr, strings.Join(dirs, ",")+": "+l)
		}
	}
	if err != nil {
		return nil, err
	}
	// A webhook hook is not called from here: it fails, which blocks.
	noService := outbound.DoerFunc(func(_ context.Context, req outbound.Request) (*outbound.Response, error) {
		return nil, errors.New("loadout test calls no Service")
	})
	hosts := map[string]*replayHost{}
	for _, cm := range cms {
		pc, err := published.Parse(cm.Data)
		if err != nil {
			return nil, err
		}
		m := pc.Manifest()
		ws := exthost.WorkspaceInfo{Name: m.Workspace.Name, Namespace: m.Workspace.Namespace}
		host, outcomes := exthost.NewHostFromRegistry(ctx, m.Registry, ws, noService)
		for _, out := range outcomes {
			if out.State != vocab.ExtensionLoaded {
				return nil, fmt.Errorf("workspace %s/%s: extension %s did not load: %s: %s", ws.Namespace, ws.Name, out.Extension, out.Reason, out.Message)
			}
		}
		rh := &replayHost{host: host, schemas: map[string]*exthost.InputSchema{}}
		for _, t := range m.Registry.Tools {
			if t.Runnable() && len(t.InputSchema) > 0 {
				if rh.schemas[t.Name], err = exthost.CompileInputSchema(t.InputSchema); err != nil {
					return nil, fmt.Errorf("workspace %s/%s: tool %q: inputSchema %w", ws.Namespace, ws.Name, t.Name, err)
				}
			}
		}
		hosts[ws.Namespace+"/"+ws.Name] = rh
	}
	return hosts, nil
}

// decide is hostd's verdict on c; a nil host is a Workspace this side
// does not have.
func (h *replayHost) decide(ctx context.Context, c replayCall) (verdict, error) {
	if h == nil {
		return verdict{Verdict: "absent"}, nil
	}
	if c.Event != "" {
		req := exthost.EventRequest{Event: vocab.HookEvent(c.Event), Session: exthost.SessionInfo{ID: "loadout-test"}}
		if c.Prompt != "" || req.Event == vocab.UserInput || req.Event == vocab.BeforeAgentStart {
			req.Prompt = &exthost.Prompt{Text: c.Prompt}
		}
		out, err := h.host.Event(ctx, req)
		if err != nil {
			return verdict{}, err
		}
		v := verdict{Verdict: "allowed", Extension: out.Extension, Hook: out.Hook}
		switch {
		case out.Ask:
			v.Verdict, v.Message = "ask", out.Message
		case !out.Allowed:
			v.Verdict, v.Message = "stopped", out.Message
		}
		if out.Input != nil {
			v.Arguments = ledger.DigestBytes([]byte(*out.Input))
		}
		return v, nil
	}
	call := exthost.ToolCall{ID: "loadout-test", Name: c.Tool, Arguments: c.Arguments}
	if s := h.schemas[c.Tool]; s != nil && !h.host.Denies(c.Tool) {
		if err := s.Validate(call.Arguments); err != nil {
			return verdict{Verdict: "blocked", Message: "invalid arguments: " + err.Error()}, nil
		}
	}
	d := h.host.Decide(ctx, call)
	v := verdict{Verdict: "allowed", Arguments: ledger.Digest(d.Call.Arguments)}
	if d.Blocked != nil {
		v.Verdict, v.Arguments = "blocked", ""
		if d.Asks() {
			v.Verdict = "ask"
		}
		v.Extension, v.Hook, v.Message = d.Verdict.Extension, d.Verdict.Hook, d.Verdict.Reason
	}
	return v, nil
}
