package resources

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/jsonindent"
)

// encodeJSON is the one JSON encoding of the published keys: struct fields in
// declaration order, map keys sorted (encoding/json), no HTML escaping (so "<"
// stays readable in prompts), one trailing newline, and each level indented
// by indent ("" for compact).
func encodeJSON(v any, indent string) (string, error) {
	if indent != "" {
		// The same bytes as the encoder below with SetIndent, in less time.
		b, err := jsonindent.Encode(v, indent)
		return string(b), err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// canonicalJSON re-encodes a raw JSON value with sorted object keys, so that
// input schemas arriving with any key order publish the same bytes. Numbers
// keep their exact text.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// hashFieldText is how the manifest's top-level hash field is spelled by
// encodeJSON; the hash is computed with its value empty.
func hashFieldText(hash string) string {
	return `"hash": ` + strconv.Quote(hash)
}

// ContextHash computes the context hash of ConfigMap data: "sha256:" and the
// hex SHA-256 over every key but the signature (contract.KeySignature) in
// sorted order, each written as
// "<key>\n<decimal byte length of value>\n<value>", where manifest.json is
// taken with its top-level "hash" value empty. The length prefix keeps the
// encoding unambiguous whatever the values contain.
func ContextHash(data map[string]string) string {
	h := sha256.New()
	for _, k := range sortedKeys(data) {
		if k == contract.KeySignature {
			continue // the signature signs the hash; it cannot be part of it
		}
		v := data[k]
		if k == contract.KeyManifest {
			v = blankHash(v)
		}
		fmt.Fprintf(h, "%s\n%d\n", k, len(v))
		h.Write([]byte(v))
	}
	return contract.HashPrefix + hex.EncodeToString(h.Sum(nil))
}

// blankHash empties the first "hash" field of a manifest.json text. The
// top-level field is the first one: apiVersion, kind and workspace precede it
// and contain no "hash" key.
func blankHash(manifest string) string {
	i := strings.Index(manifest, `"hash": "`)
	if i < 0 {
		return manifest
	}
	j := strings.IndexByte(manifest[i+len(`"hash": "`):], '"')
	if j < 0 {
		return manifest
	}
	return manifest[:i] + hashFieldText("") + manifest[i+len(`"hash": "`)+j+1:]
}

// DataBytes is the size of ConfigMap data as budgets count it: the sum of
// every key's and value's length in bytes.
func DataBytes(data map[string]string) int64 {
	var n int64
	for k, v := range data {
		n += int64(len(k) + len(v))
	}
	return n
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
