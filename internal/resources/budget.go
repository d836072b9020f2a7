package resources

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// The budget is checked while the context is built, not after: one
// Workspace over a tenant's many large Skills must not make the shared
// manager hold hundreds of megabytes just to learn that they do not fit.
// Render first compares a lower bound of the data (text that must appear at
// least once) with the budget, then encodes the large keys item by item into
// writers that refuse the first byte over what is left.

// errOverBudget stops an encoding that would pass the budget.
var errOverBudget = errors.New("over budget")

// minDataBytes is a lower bound of the published data of cat and
// instructions: every instruction is in system-prompt.md, every winning
// skill's description, body and files in skills.json, every winning
// template's body in templates.json. It reads only lengths.
func minDataBytes(cat *Catalog, instructions []Instruction) int64 {
	var n int64
	for _, in := range instructions {
		n += int64(len(in.Body))
	}
	for _, s := range cat.Skills() {
		n += int64(len(s.Description) + len(s.Body))
		for _, f := range s.Files {
			n += int64(len(f.Path) + len(f.Content))
		}
	}
	for _, t := range cat.Templates() {
		n += int64(len(t.Body))
	}
	return n
}

// budgetWriter collects output up to max bytes; the first write past it
// fails and nothing more is kept. max < 0 means unlimited. Writes are kept as
// chunks and joined once by String: growing one buffer by appending would
// allocate several times the final size on the way.
type budgetWriter struct {
	chunks [][]byte
	n      int64
	max    int64
}

func (w *budgetWriter) Write(p []byte) (int, error) {
	if w.max >= 0 && w.n+int64(len(p)) > w.max {
		return 0, errOverBudget
	}
	w.chunks = append(w.chunks, bytes.Clone(p))
	w.n += int64(len(p))
	return len(p), nil
}

// Len is the number of bytes written.
func (w *budgetWriter) Len() int64 { return w.n }

// String joins what was written.
func (w *budgetWriter) String() string {
	var b strings.Builder
	b.Grow(int(w.n))
	for _, c := range w.chunks {
		b.Write(c)
	}
	return b.String()
}

// encodeListWithin writes {"<field>":[item,item,…]} and a newline, exactly
// the compact encodeJSON of a struct whose only field is that list, one item
// at a time into w, so an over-budget list stops at the first item that does
// not fit instead of being encoded whole. item(i) builds the i-th element on
// demand.
func encodeListWithin[T any](w *budgetWriter, field string, n int, item func(i int) T) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	name, _ := json.Marshal(field) // a plain ASCII field name never fails
	if _, err := w.Write([]byte("{" + string(name) + ":[")); err != nil {
		return err
	}
	for i := range n {
		buf.Reset()
		if err := enc.Encode(item(i)); err != nil {
			return err
		}
		elem := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if i > 0 {
			if _, err := w.Write([]byte(",")); err != nil {
				return err
			}
		}
		if _, err := w.Write(elem); err != nil {
			return err
		}
	}
	_, err := w.Write([]byte("]}\n"))
	return err
}
