package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/ledger"
)

func newAuditCommand() *cobra.Command {
	audit := &cobra.Command{
		Use:   "audit",
		Short: "Check hostd's decision ledger",
	}
	var anchorsFile string
	verify := &cobra.Command{
		Use:   "verify FILE",
		Short: "Check that a decision ledger is whole, and name its first break or each forgery its anchors show",
		Long: `Check a file of hostd's decision ledger records (JSON lines; a mixed log is
fine: lines that are not records are skipped). Each hostd process writes one
chain: every record carries its seq, the digest of the previous record and
its own digest. verify names the first break, by line and seq: an edited
record (its bytes no longer hash to its digest, or the next record's prev
no longer names it), a gap (records deleted, or a chain whose first
records are missing) or a reorder, and exits 1. A whole ledger exits 0 with
a summary.

The file alone cannot show a record rewritten with the chain recomputed, a
chain deleted or appended whole, or a cut tail. --anchors names a file of
hostd's anchors (its signed chain heads) from a copy the ledger's holder
could not write: the OTLP collector's, or hostd's container log as the
node's log shipper took it. verify then names each forgery ("record N
rewritten", "chain X deleted (anchored head missing)", "chain Y not anchored
(appended)", "tail cut after N (anchor says M)") and exits 1. Anchors in FILE
count when they verify with their chain's key from the anchors file. See
docs/hostd.md#decision-ledger.`,
		Example: `  loadout audit verify hostd.log
  loadout audit verify --anchors collector-anchors.jsonl archived-hostd.log
  kubectl logs POD -c loadout-hostd > hostd.log && loadout audit verify hostd.log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			if anchorsFile != "" {
				return verifyAnchored(cmd, args[0], f, anchorsFile)
			}
			sum, brk, err := ledger.Verify(f)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if brk != nil {
				return fmt.Errorf("%s: the ledger is broken at %w", args[0], brk)
			}
			if sum.Records == 0 {
				return fmt.Errorf("%s: no ledger records", args[0])
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: whole: %s (not checked against anchors: pass --anchors)\n", args[0], sum)
			return nil
		},
	}
	verify.Flags().StringVar(&anchorsFile, "anchors", "", "file of hostd's signed chain heads (anchor lines; other lines are skipped) to check the ledger against")
	audit.AddCommand(verify)
	return audit
}

// verifyAnchored is `audit verify --anchors`: the file's own break, then
// every forgery the anchors show, each on its line; any of them exits 1.
func verifyAnchored(cmd *cobra.Command, name string, f *os.File, anchorsFile string) error {
	a, err := os.Open(anchorsFile)
	if err != nil {
		return err
	}
	defer a.Close()
	rep, err := ledger.VerifyAnchored(f, a)
	if err != nil {
		return fmt.Errorf("%s against %s: %w", name, anchorsFile, err)
	}
	if rep.Anchors == 0 {
		return fmt.Errorf("%s: no anchors in %s", name, anchorsFile)
	}
	var problems []string
	if rep.Break != nil {
		problems = append(problems, "the ledger is broken at "+rep.Break.Error())
	}
	for _, fg := range rep.Forgeries {
		problems = append(problems, fg.String())
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %d problem(s) against %d anchors:\n  %s", name, len(problems), rep.Anchors, strings.Join(problems, "\n  "))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: whole and anchored: %s; %d anchors, %d records after their chain's last anchor\n",
		name, rep.Summary, rep.Anchors, rep.Unanchored)
	return nil
}
