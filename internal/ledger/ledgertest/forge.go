// Package ledgertest forges decision ledgers the way a holder of the file
// can, for the tests that prove the anchors see it. It does not import
// package ledger, so that package's own tests can use it.
package ledgertest

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

var (
	chainMember  = regexp.MustCompile(`"chain":"([^"]*)"`)
	prevMember   = regexp.MustCompile(`"prev":"[^"]*"`)
	digestMember = regexp.MustCompile(`,"digest":"[^"]*"}\n?$`)
)

// Lines splits a ledger file into its lines, each with its newline.
func Lines(file string) []string {
	var out []string
	for _, l := range strings.SplitAfter(file, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Records keeps the record lines of lines: a forger drops hostd's anchors,
// which it cannot sign again.
func Records(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, `{"ledger":`) {
			out = append(out, l)
		}
	}
	return out
}

// Chain is the chain id of a record or anchor line.
func Chain(line string) string {
	if m := chainMember.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// Rechain recomputes every record's prev and digest in order, per chain,
// as a forger who edited a record does so that the file verifies whole.
func Rechain(records []string) []string {
	out := make([]string, len(records))
	prev := map[string]string{}
	for i, l := range records {
		chain := Chain(l)
		body := digestMember.ReplaceAllString(l, "}")
		body = prevMember.ReplaceAllString(body, `"prev":"`+prev[chain]+`"`)
		sum := sha256.Sum256([]byte(body))
		d := "sha256:" + hex.EncodeToString(sum[:])
		out[i] = strings.TrimSuffix(body, "}") + `,"digest":"` + d + "\"}\n"
		prev[chain] = d
	}
	return out
}
