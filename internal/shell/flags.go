package shell

import (
	"slices"
	"strings"
)

// flags are the options a command's argv sets, read the GNU way, which is
// the most permissive: before the first "--", an argument "-abc" sets the
// short flags a, b and c, and "--name" or "--name=value" sets the long flag
// name, wherever they stand among the operands (GNU tools permute: rm x -rf
// removes recursively). Programs' own option tables are not known, so a
// value glued to a short option counts as flags too (grep -erf sets e, r,
// f): over-reading can only make a guard stricter.
type flags struct {
	short [2]uint64 // ASCII short flags, one bit each
	long  []string  // sorted, unique
}

func parseFlags(argv []string) flags {
	var f flags
	for _, a := range argv[1:] {
		switch {
		case a == "--":
			slices.Sort(f.long)
			f.long = slices.Compact(f.long)
			return f
		case strings.HasPrefix(a, "--"):
			if n, _, _ := strings.Cut(a[2:], "="); n != "" {
				f.long = append(f.long, n)
			}
		case len(a) > 1 && a[0] == '-':
			for i := 1; i < len(a); i++ {
				if c := a[i]; c < 128 {
					f.short[c/64] |= 1 << (c % 64)
				}
			}
		}
	}
	slices.Sort(f.long)
	f.long = slices.Compact(f.long)
	return f
}

// HasFlag reports whether the command sets any of the named flags. A name of
// one character is a short flag ('r' or '-r'); a longer one is a long flag
// ('recursive' or '--recursive'), also set by any abbreviation of it, as
// getopt_long accepts (--rec, --r). Case matters: -R is not -r.
func (c *Command) HasFlag(names ...string) bool {
	for _, n := range names {
		long := strings.HasPrefix(n, "--")
		n = strings.TrimPrefix(strings.TrimPrefix(n, "-"), "-")
		switch {
		case n == "":
		case !long && len(n) == 1:
			if b := n[0]; b < 128 && c.flags.short[b/64]&(1<<(b%64)) != 0 {
				return true
			}
		default:
			for k := 1; k <= len(n); k++ {
				if _, ok := slices.BinarySearch(c.flags.long, n[:k]); ok {
					return true
				}
			}
		}
	}
	return false
}
