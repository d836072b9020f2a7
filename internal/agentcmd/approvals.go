package agentcmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/loadout-dev/loadout/internal/approval"
	"github.com/loadout-dev/loadout/internal/hookevents"
	"github.com/loadout-dev/loadout/internal/hostd"
)

// approvalFlags configure how hostd reaches the cluster for Approvals
// (docs/hooks.md, "Approvals").
type approvalFlags struct {
	tokenFile string
	caFile    string
	server    string
	// failureEvents reports hook failures as Events on the Workspace.
	failureEvents bool
}

func (f *approvalFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.tokenFile, "approvals-token-file", "",
		"projected ServiceAccount token for the API server (bound to this pod): hostd's identity when it creates and watches Approvals for the asks an imposed hook sends to the cluster; empty: such asks are blocked. The agent-pod admission policy sets it")
	fs.StringVar(&f.caFile, "approvals-ca-file", "", "the API server's CA (kube-root-ca.crt's ca.crt); empty: the system roots")
	fs.BoolVar(&f.failureEvents, "hook-failure-events", true,
		"with --approvals-token-file and --workspace: report hook failures (errors, timeouts) as Warning Events on the Workspace, at most one per hook and reason per 5 minutes (docs/hostd.md)")
	fs.StringVar(&f.server, "approvals-server", "", "the API server's URL; empty: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT")
}

// broker is the Approvals broker the flags configure; nil without a token
// file. The namespace is the token's own. A configuration hostd cannot use
// (no token yet, no API server address) does not keep hostd from serving
// its policy: the broker is Broken, every ask to the cluster is blocked
// naming why, and warn is told once.
func (f *approvalFlags) broker(warn io.Writer) *approval.Broker {
	if f.tokenFile == "" {
		return nil
	}
	b, err := f.newBroker()
	if err != nil {
		err = fmt.Errorf("approvals: %w", err)
		_, _ = fmt.Fprintf(warn, "loadout hostd: %v; asks sent to the cluster are blocked\n", err)
		return approval.Broken(err)
	}
	return b
}

func (f *approvalFlags) newBroker() (*approval.Broker, error) {
	client, err := f.client()
	if err != nil {
		return nil, err
	}
	return approval.NewBroker(client, func() (approval.Identity, error) { return approval.TokenIdentity(f.tokenFile) }, nil), nil
}

// client is the API client of the token's identity, in its namespace.
func (f *approvalFlags) client() (*approval.Client, error) {
	server := f.server
	if server == "" {
		var err error
		if server, err = approval.InClusterServer(); err != nil {
			return nil, err
		}
	}
	id, err := approval.TokenIdentity(f.tokenFile)
	if err != nil {
		return nil, fmt.Errorf("--approvals-token-file: %w", err)
	}
	return approval.New(approval.Config{Server: server, CAFile: f.caFile, TokenFile: f.tokenFile, Namespace: id.Namespace})
}

// hookEvents makes hostd's reporter of hook failures as Events on the
// Workspace (internal/hookevents, at most one per hook and reason per 5
// minutes), created with hostd's identity in its own namespace, when
// --hook-failure-events is on and the Workspace is in that namespace (an
// Event about another namespace's Workspace would be refused anyway). nil,
// with warn told why, otherwise.
func (f *approvalFlags) hookEvents(workspace, pod string, warn io.Writer) func(observe func(string)) hostd.FailureReporter {
	creator := f.eventCreator(workspace, warn)
	if creator == nil {
		return nil
	}
	ns, name, _ := strings.Cut(workspace, "/")
	return func(observe func(string)) hostd.FailureReporter {
		return hookevents.New(hookevents.Options{Creator: creator, Namespace: ns, Workspace: name, Pod: pod,
			Observe: func(o hookevents.Outcome) { observe(string(o)) }})
	}
}

// eventCreator is the client that creates the Events, or nil (hookEvents).
func (f *approvalFlags) eventCreator(workspace string, warn io.Writer) hookevents.Creator {
	if f.tokenFile == "" || !f.failureEvents {
		return nil
	}
	client, err := f.client()
	if err == nil && !strings.HasPrefix(workspace, client.Namespace()+"/") {
		err = fmt.Errorf("the Workspace %q is not in the token's namespace %s", workspace, client.Namespace())
	}
	if err != nil {
		_, _ = fmt.Fprintf(warn, "loadout hostd: hook failure Events: %v; failures are logged and counted only\n", err)
		return nil
	}
	return client
}
