package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/agentcmd"
	"github.com/loadout-dev/loadout/internal/published"
)

func newRenderCommand() *cobra.Command {
	var dir string
	var sets []string
	var at int64
	cmd := &cobra.Command{
		Use:   "render NAME",
		Short: "Render a template of a mounted context into a user message",
		Long: `Render the template NAME of the context mounted at --context-dir and print the
canonical user message as JSON:
  {"role":"user","content":[{"type":"text","text":"..."}],"timestamp":<ms>}

Every {{name}} placeholder needs a --set name=value; extra values are ignored.

A template with steps (a command) also prints its plan without running
anything: "steps" lists each step in order, a tool call with its arguments
filled or a template with its rendered text, and "note" says the tool steps
were not run; the message is the text of the render steps.`,
		Example: `  loadout render review --set file=src/parser.go --set owner=runtime`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pc, err := published.LoadDir(dir)
			if err != nil {
				return err
			}
			vals, err := parseSets(sets)
			if err != nil {
				return err
			}
			now := time.Now()
			if at != 0 {
				now = time.UnixMilli(at)
			}
			msg, err := pc.Render(args[0], vals, now)
			if err != nil {
				return err
			}
			return writeJSON(cmd.OutOrStdout(), msg)
		},
	}
	cmd.Flags().StringVar(&dir, "context-dir", agentcmd.DefaultContextDir, "directory where the context ConfigMap is mounted")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "template argument as name=value (repeatable)")
	cmd.Flags().Int64Var(&at, "timestamp", 0, "message timestamp in Unix milliseconds (default: now)")
	return cmd
}

func newActivateCommand() *cobra.Command {
	var dir string
	var files []string
	cmd := &cobra.Command{
		Use:   "activate NAME",
		Short: "Print a skill's body and requested files from a mounted context",
		Long: `Activate the skill NAME of the context mounted at --context-dir and print
{"name","body","files":[{"request","source","content"}]} as JSON.

Each --file is a path relative to the skill; absolute paths and paths leaving
the skill are refused. Repeated requests are printed once.`,
		Example: `  loadout activate review --file checklist.md`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pc, err := published.LoadDir(dir)
			if err != nil {
				return err
			}
			s, err := pc.Activate(args[0], files)
			if err != nil {
				return err
			}
			return writeJSON(cmd.OutOrStdout(), s)
		},
	}
	cmd.Flags().StringVar(&dir, "context-dir", agentcmd.DefaultContextDir, "directory where the context ConfigMap is mounted")
	cmd.Flags().StringArrayVar(&files, "file", nil, "file of the skill to include (repeatable)")
	return cmd
}

// parseSets parses name=value pairs; the value may contain '='.
func parseSets(sets []string) (map[string]string, error) {
	out := make(map[string]string, len(sets))
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--set %q: want name=value", s)
		}
		out[k] = v
	}
	return out, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
