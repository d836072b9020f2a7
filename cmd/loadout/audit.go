package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/ledger"
)

func newAuditCommand() *cobra.Command {
	audit := &cobra.Command{
		Use:   "audit",
		Short: "Check hostd's decision ledger",
	}
	audit.AddCommand(&cobra.Command{
		Use:   "verify FILE",
		Short: "Check that a decision ledger is whole, and name its first break",
		Long: `Check a file of hostd's decision ledger records (JSON lines; a mixed log is
fine: lines that are not records are skipped). Each hostd process writes one
chain: every record carries its seq, the digest of the previous record and
its own digest. verify names the first break, by line and seq: an edited
record (its bytes no longer hash to its digest, or the next record's prev
no longer names it), a gap (records deleted, or a chain whose first
records are missing) or a reorder, and exits 1. A whole ledger exits 0 with
a summary. Records deleted from the end of a chain leave no trace in the
file: compare each chain's last seq with hostd's
loadout_hostd_ledger_records_total. See docs/hostd.md#decision-ledger.`,
		Example: `  loadout audit verify hostd.log
  kubectl logs POD -c hostd > hostd.log && loadout audit verify hostd.log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
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
			fmt.Fprintf(cmd.OutOrStdout(), "%s: whole: %s\n", args[0], sum)
			return nil
		},
	})
	return audit
}
