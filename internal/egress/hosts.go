// Package egress holds a sandbox's egress by host name: the host rules a
// declaration lists (network.hosts) and the proxy `loadout sandbox` starts
// beside a command so it reaches those hosts, and no other, by name
// (docs/security.md, "Sandbox"). Landlock checks ports, not addresses;
// names are checked here, where the agent asks for them.
package egress

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// DefaultPort is the port of a host rule that names none.
const DefaultPort = 443

// Rule is one normalised host rule: Name is a host name or IP literal, or
// "*." and a domain for every name below it; Port is the one port.
type Rule struct {
	Name string
	Port int
}

// String is the rule's normal form, NAME:PORT.
func (r Rule) String() string { return net.JoinHostPort(r.Name, strconv.Itoa(r.Port)) }

// ParseRule reads NAME, NAME:PORT, *.DOMAIN or *.DOMAIN:PORT, lower-casing
// the name.
func ParseRule(s string) (Rule, error) {
	name, port := s, DefaultPort
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		p, err := strconv.Atoi(s[i+1:])
		if err != nil || p < 1 || p > 65535 {
			return Rule{}, fmt.Errorf("host %q: the port must be 1-65535", s)
		}
		name, port = s[:i], p
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	bare := strings.TrimPrefix(name, "*.")
	if bare == "" || strings.ContainsAny(bare, "*/ \t") || strings.Contains(bare, "..") {
		return Rule{}, fmt.Errorf("host %q: want NAME, NAME:PORT or *.DOMAIN[:PORT]", s)
	}
	return Rule{Name: name, Port: port}, nil
}

// Normal parses and sorts rules, dropping duplicates and those that do not
// parse (dropping a grant only narrows; the API refuses them).
func Normal(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if r, err := ParseRule(s); err == nil {
			out = append(out, r.String())
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// covers reports whether r allows everything o allows: the same port, and
// the same name or a wildcard whose domain o's name (or domain) lies below.
func (r Rule) covers(o Rule) bool {
	if r.Port != o.Port {
		return false
	}
	if r.Name == o.Name {
		return true
	}
	domain, ok := strings.CutPrefix(r.Name, "*.")
	return ok && strings.HasSuffix(strings.TrimPrefix(o.Name, "*."), "."+domain)
}

// Allows reports whether the rules (normal form) let a connection to
// host:port through. host is matched as given, lower-cased, before any
// resolution.
func Allows(rules []string, host string, port int) bool {
	want := Rule{Name: strings.ToLower(strings.TrimSuffix(host, ".")), Port: port}
	for _, s := range rules {
		if r, err := ParseRule(s); err == nil && r.covers(want) {
			return true
		}
	}
	return false
}

// Intersect is what two declarations' networks allow by name: a rule of
// one survives where the other allows it too, by a rule that covers it or
// by its direct ports (a port open to every host is open to this one); of
// two overlapping wildcards the narrower stays. Rules on a port both open
// directly are left out: the ports already allow them.
func Intersect(aRules []string, aPorts []int, bRules []string, bPorts []int) []string {
	parse := func(in []string) []Rule {
		var out []Rule
		for _, s := range in {
			if r, err := ParseRule(s); err == nil {
				out = append(out, r)
			}
		}
		return out
	}
	a, b := parse(aRules), parse(bRules)
	var out []string
	keep := func(r Rule, others []Rule, otherPorts []int) {
		if slices.Contains(otherPorts, r.Port) {
			out = append(out, r.String())
			return
		}
		for _, o := range others {
			if o.covers(r) {
				out = append(out, r.String())
				return
			}
		}
	}
	for _, r := range a {
		keep(r, b, bPorts)
	}
	for _, r := range b {
		keep(r, a, aPorts)
	}
	var result []string
	for _, s := range Normal(out) {
		if r, _ := ParseRule(s); !(slices.Contains(aPorts, r.Port) && slices.Contains(bPorts, r.Port)) {
			result = append(result, s)
		}
	}
	return result
}
