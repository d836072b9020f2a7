package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/loadout-dev/loadout/internal/shard"
)

func newShardsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "shards",
		Short: "Plan how manager shards split the cluster's namespaces",
	}
	cmd.AddCommand(newShardsPlanCommand())
	return cmd
}

func newShardsPlanCommand() *cobra.Command {
	var (
		n       int
		from    string
		current string
	)
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Write a shard plan that balances namespaces by their Workspaces",
		Long: `Write a shard plan (the manager's --shard-plan, the chart's shards.plan) for N
shards. A namespace belongs to the shard whose ranges hold the 64-bit FNV-1a
hash of its name, the hash the API server's sharded list and watch uses.
Equal ranges balance badly: the hashes of sequential names (team-001,
team-002, ...) cluster, so the plan places its boundaries between the
hashes of the real namespaces, weighted by their Workspaces.

The namespaces and their weights come from the cluster of $KUBECONFIG (every
namespace holding a Workspace, weighted by how many) or, with --from FILE
('-' for stdin), from lines "NAMESPACE [WEIGHT]". The plan goes to stdout;
each shard's namespaces and weight go to stderr, and with --current PLAN the
same for the plan in use, to compare. A new plan has a new ID, so its Leases
are new ones: see docs/operations.md for resharding.`,
		Example: `  loadout shards plan --shards 3 > plan.yaml
  kubectl get ns -o name | cut -d/ -f2 | loadout shards plan --shards 3 --from -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 1 {
				return fmt.Errorf("--shards=%d: want at least 1", n)
			}
			var weights map[string]int
			var err error
			if from != "" {
				weights, err = readWeights(cmd.InOrStdin(), from)
			} else {
				weights, err = clusterWeights(cmd)
			}
			if err != nil {
				return err
			}
			plan := shard.WeightedPlan(weights, n)
			if err := plan.Validate(); err != nil {
				return err
			}
			b := plan.YAML()
			fmt.Fprintf(cmd.OutOrStdout(), "# loadout shard plan %s: %d shards over %d namespaces\n%s", plan.ID(), n, len(weights), b)
			report(cmd.ErrOrStderr(), "plan "+plan.ID(), plan, weights)
			if current != "" {
				cb, err := os.ReadFile(current)
				if err != nil {
					return err
				}
				cur, err := shard.ParsePlan(cb)
				if err != nil {
					return err
				}
				report(cmd.ErrOrStderr(), "current plan "+cur.ID(), cur, weights)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&n, "shards", 3, "Number of shards.")
	cmd.Flags().StringVar(&from, "from", "", "Read namespaces (and weights) from this file, '-' for stdin, instead of the cluster.")
	cmd.Flags().StringVar(&current, "current", "", "A plan in use, to report how it spreads the same namespaces.")
	return cmd
}

func report(w io.Writer, title string, p *shard.Plan, weights map[string]int) {
	loads := p.Loads(weights)
	fmt.Fprintf(w, "%s (heaviest/mean %.3f):\n", title, shard.Imbalance(loads))
	for _, l := range loads {
		fmt.Fprintf(w, "  shard %s: %d namespaces, weight %d\n", l.Shard, l.Namespaces, l.Weight)
	}
}

// readWeights reads "NAMESPACE [WEIGHT]" lines; # starts a comment.
func readWeights(stdin io.Reader, from string) (map[string]int, error) {
	r := stdin
	if from != "-" {
		f, err := os.Open(from)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	weights := map[string]int{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		switch len(fields) {
		case 0:
			continue
		case 1:
			weights[fields[0]] += 1
		case 2:
			w, err := strconv.Atoi(fields[1])
			if err != nil || w < 0 {
				return nil, fmt.Errorf("%s:%d: weight %q: want a whole number", from, line, fields[1])
			}
			weights[fields[0]] += w
		default:
			return nil, fmt.Errorf("%s:%d: want NAMESPACE [WEIGHT]", from, line)
		}
	}
	if len(weights) == 0 {
		return nil, fmt.Errorf("%s: no namespaces", from)
	}
	return weights, sc.Err()
}

// clusterWeights counts Workspaces per namespace in the cluster.
func clusterWeights(cmd *cobra.Command) (map[string]int, error) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	weights := map[string]int{}
	gvr := k8sschema.GroupVersionResource{Group: "loadout.dev", Version: "v1alpha1", Resource: "workspaces"}
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := mc.Resource(gvr).List(cmd.Context(), opts)
		if err != nil {
			return nil, fmt.Errorf("listing Workspaces: %w", err)
		}
		for _, ws := range list.Items {
			weights[ws.Namespace]++
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			break
		}
	}
	if len(weights) == 0 {
		return nil, fmt.Errorf("the cluster has no Workspaces to weigh: use --from")
	}
	return weights, nil
}
