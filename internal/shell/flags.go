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
//
// A word that may begin with "-" only at run time ("$F", *, which a file
// named -rf matches) may be any option: every flag then reads as set.
type flags struct {
	short [2]uint64 // ASCII short flags, one bit each
	long  []string  // sorted, unique
	any   bool      // a word before "--" may be any option
}

func parseFlags(argv []string, info []wordInfo) flags {
	var f flags
	for i, a := range argv[1:] {
		if info != nil && info[i+1]&wLeading != 0 {
			f.any = true
		}
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
// getopt_long accepts (--rec, --r); a long name ending in * ('del*') is
// every long flag beginning with the rest (--delete-after) and its
// abbreviations. Case matters: -R is not -r.
//
// A word that may begin with "-" only at run time ("$F", *) may be any
// option, so every flag reads as set. In PowerShell, parameters are read
// as PowerShell does: case-insensitive, any unambiguous prefix (-r, -Rec
// and -Recurse:$true are all Recurse), so a name is set by any prefix of
// it; a cmd.exe style /S switch reads as S.
func (c *Command) HasFlag(names ...string) bool {
	if c.flags.any {
		for _, n := range names {
			if strings.Trim(n, "-") != "" {
				return true
			}
		}
		return false
	}
	if c.Dialect == string(PowerShell) {
		return c.psHasFlag(names)
	}
	for _, n := range names {
		long := strings.HasPrefix(n, "--")
		n = strings.TrimPrefix(strings.TrimPrefix(n, "-"), "-")
		switch {
		case n == "":
		case !long && len(n) == 1:
			if b := n[0]; b < 128 && c.flags.short[b/64]&(1<<(b%64)) != 0 {
				return true
			}
		case strings.HasSuffix(n, "*"):
			// every long flag beginning with the rest, and its abbreviations
			n = n[:len(n)-1]
			i, _ := slices.BinarySearch(c.flags.long, n)
			if i < len(c.flags.long) && strings.HasPrefix(c.flags.long[i], n) && n != "" {
				return true
			}
			for k := 1; k < len(n); k++ {
				if _, ok := slices.BinarySearch(c.flags.long, n[:k]); ok {
					return true
				}
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

// set reports whether any of the short flags is set.
func (f flags) set(short ...byte) bool {
	if f.any {
		return true
	}
	for _, b := range short {
		if b < 128 && f.short[b/64]&(1<<(b%64)) != 0 {
			return true
		}
	}
	return false
}

// psHasFlag: the command's parameters (-Name, -Name:value, /S) as
// PowerShell reads them: a parameter names every name it is a prefix of.
func (c *Command) psHasFlag(names []string) bool {
	for _, n := range names {
		n = strings.ToLower(strings.TrimLeft(n, "-/"))
		if n == "" {
			continue
		}
		for i, a := range c.Argv[1:] {
			if a == "--" {
				break
			}
			if len(a) < 2 || (a[0] != '-' && a[0] != '/') {
				continue
			}
			if a[0] == '/' && len(a) != 2 {
				continue // a path, not a cmd.exe switch
			}
			p, _, _ := strings.Cut(strings.ToLower(a[1:]), ":")
			_ = i
			if p != "" && strings.HasPrefix(n, p) {
				return true
			}
		}
	}
	return false
}

// HasArg reports whether any of the command's arguments (argv after the
// name) is exactly one of names; in PowerShell, ignoring case. An argument
// only known at run time ("$X") may be any of them.
func (c *Command) HasArg(names ...string) bool {
	if c.dynamic && slices.ContainsFunc(names, func(n string) bool { return n != "" }) {
		return true
	}
	for _, a := range c.Argv[min(1, len(c.Argv)):] {
		for _, n := range names {
			if a == n || (c.Dialect == string(PowerShell) && strings.EqualFold(a, n)) {
				return true
			}
		}
	}
	return false
}

// Mentions reports whether any of names appears as a whole identifier (a
// run of letters, digits and _) in the command's arguments, or in the
// program an interpreter reads from a here-document: python3 -c
// 'import shutil; shutil.rmtree("x")' mentions rmtree; a name ending in *
// is any identifier beginning with the rest ('rm*': rmtree, rm_rf). It
// reads another language's code as words, not as what it does.
func (c *Command) Mentions(names ...string) bool {
	for _, n := range names {
		if n == "" {
			continue
		}
		for _, a := range c.Argv[min(1, len(c.Argv)):] {
			if mentions(a, n) {
				return true
			}
		}
		if mentions(c.script, n) {
			return true
		}
	}
	return false
}

func mentions(s, n string) bool {
	n, prefix := strings.CutSuffix(n, "*")
	if n == "" {
		return false
	}
	for off := 0; ; {
		i := strings.Index(s[off:], n)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(n)
		if (i == 0 || !identByte(s[i-1])) && (prefix || j == len(s) || !identByte(s[j])) {
			return true
		}
		off = i + 1
	}
}

func identByte(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}
