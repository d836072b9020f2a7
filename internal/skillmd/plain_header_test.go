package skillmd

import (
	"reflect"
	"testing"
)

// plainHeaderSeeds are headers near the edge of what parsePlainHeader
// accepts: each must either be declined or read exactly as YAML reads it.
var plainHeaderSeeds = []string{
	"name: review\ndescription: Review a change, carefully.\n",
	"name: review\ndescription: It's \"quoted\" inside, 100% fine & ok!\nlicense: Apache-2.0\ncompatibility: Needs git and a shell\n",
	"name: yes\ndescription: d\n",
	"name: True\ndescription: d\n",
	"name: Null\ndescription: d\n",
	"name: n\ndescription: d\n",
	"name: off\ndescription: d\n",
	"name: y2k\ndescription: d\n",
	"name: review\ndescription: a: b\n",
	"name: review\ndescription: a #comment\n",
	"name: review\ndescription: trailing blank \n",
	"name: review\ndescription: [a, b]\n",
	"name: review\ndescription: x\n  continued on the next line\n",
	"name: review\nname: again\ndescription: d\n",
	"name: review\ndescription: d\nallowed-tools: bash\n",
	"name: review\ndescription: d\nmetadata: x\n",
	"name: review\ndescription: d\nextra: x\n",
	"name: review\r\ndescription: d\r\n",
	"name: review\n\ndescription: d\n",
	"name: review\ndescription: caf\u00e9\n",
	"name:  review\ndescription: d\n",
	"name: review\ndescription: d\t\n",
	"name: .inf\ndescription: d\n",
	"name: 0x1F\ndescription: d\n",
	"name: ~\ndescription: d\n",
	"name: review\ndescription: d|e>f*g&h!i%j@k`l\n",
	"name: a-b\ndescription: Do a thing, then another - and more.\n",
	"",
	"\n",
	"# just a comment\n",
	"name:\n",
	"name: review",
}

// TestParsePlainHeader_AgreesWithYAML: whenever the fast path reads a header,
// it reads what the YAML parser reads from it.
func TestParsePlainHeader_AgreesWithYAML(t *testing.T) {
	accepted := 0
	for _, header := range plainHeaderSeeds {
		if checkPlainHeaderAgrees(t, header) {
			accepted++
		}
	}
	if accepted < 3 {
		t.Errorf("the fast path read %d of the seeds, want at least the 3 plain ones", accepted)
	}
}

func FuzzPlainHeaderAgreesWithYAML(f *testing.F) {
	for _, header := range plainHeaderSeeds {
		f.Add(header)
	}
	f.Fuzz(func(t *testing.T, header string) {
		checkPlainHeaderAgrees(t, header)
	})
}

// checkPlainHeaderAgrees fails t if parsePlainHeader reads header otherwise
// than parseYAMLHeader, and reports whether it read it.
func checkPlainHeaderAgrees(t *testing.T, header string) bool {
	t.Helper()
	fast, ok := parsePlainHeader(header)
	if !ok {
		return false
	}
	slow, err := parseYAMLHeader(header)
	if err != nil {
		t.Errorf("%q: the fast path read %+v, YAML fails: %v", header, fast, err)
		return true
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%q: the fast path read %+v, YAML %+v", header, fast, slow)
	}
	return true
}
