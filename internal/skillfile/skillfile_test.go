package skillfile

import "testing"

func TestCheckNoFileUnderFile(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		ok    bool
	}{
		{[]string{"a", "b/c", "b/d"}, true},
		{[]string{"a", "a/b"}, false},
		{[]string{"x/y", "x/y/z/w"}, false},
		{[]string{"ab", "a/b"}, true},
	} {
		files := make([]File, len(tc.paths))
		for i, p := range tc.paths {
			files[i] = File{Path: p}
		}
		if err := CheckNoFileUnderFile(files); (err == nil) != tc.ok {
			t.Errorf("%v: err = %v, want ok=%v", tc.paths, err, tc.ok)
		}
	}
}
