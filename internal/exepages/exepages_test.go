package exepages

import (
	"testing"
)

// exeRss is how much of this test binary's file is resident.
func exeRss(t *testing.T) int64 {
	t.Helper()
	rss, ok := Resident()
	if !ok {
		t.Skip("needs /proc/self/smaps (Linux)")
	}
	return rss
}

// The executable's text and read-only data leave the resident set, and the
// program goes on running from them (each page it touches comes back).
// Writable mappings (the binary's data) are left alone: exeRss does not
// count them.
func TestReleaseDropsTheExecutablesResidentPages(t *testing.T) {
	before := exeRss(t)
	if before < 1<<20 {
		t.Fatalf("the test binary has %d bytes of its file resident; a Go test binary touches more than 1 MiB of itself", before)
	}
	released := Release()
	after := exeRss(t)
	// What the test runs between the two reads comes back at once (about
	// 60% of a test binary's small footprint); the rest stays out.
	if released < before || after >= before {
		t.Fatalf("resident pages of the binary: %d before, %d after (Release said it dropped %d): want all dropped, fewer back", before, after, released)
	}
}

const sample = `00400000-00c00000 r-xp 00000000 08:01 42    /bin/prog
Size:               8192 kB
Rss:                3000 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00c00000-01400000 r--p 00800000 08:01 42    /bin/prog
Size:               8192 kB
Rss:                2000 kB
Anonymous:             4 kB
01400000-01500000 rw-p 01000000 08:01 42    /bin/prog
Rss:                 400 kB
Anonymous:           400 kB
01500000-01600000 rw-p 00000000 00:00 0 
Rss:                 100 kB
Anonymous:           100 kB
7f0000000000-7f0000001000 r--p 00000000 08:01 43    /lib/other
Rss:                   4 kB
Anonymous:             0 kB
7f0000002000-7f0000003000 r--s 00000000 08:01 42    /bin/prog
Rss:                   4 kB
Anonymous:             0 kB
`

// Mappings keeps the program's private mappings with their own sizes:
// neither the anonymous mapping after them nor another file's lends its
// figures, and a shared mapping is not one of them.
func TestMappingsReadsEachMappingsOwnSizes(t *testing.T) {
	got := Mappings([]byte(sample), "/bin/prog")
	want := []Mapping{
		{Start: 0x400000, End: 0xc00000, Rss: 3000 << 10},
		{Start: 0xc00000, End: 0x1400000, Rss: 2000 << 10, Anonymous: 4 << 10},
		{Start: 0x1400000, End: 0x1500000, Writable: true, Rss: 400 << 10, Anonymous: 400 << 10},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d mappings %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
