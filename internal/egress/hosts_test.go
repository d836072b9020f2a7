package egress

import (
	"slices"
	"testing"
)

func TestAllows_NamesPortsAndWildcards(t *testing.T) {
	rules := Normal([]string{"GitHub.com", "*.npmjs.org", "proxy.golang.org:8443", "bad host", "x:99999"})
	if want := []string{"*.npmjs.org:443", "github.com:443", "proxy.golang.org:8443"}; !slices.Equal(rules, want) {
		t.Fatalf("Normal = %v, want %v (the unparseable dropped)", rules, want)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"github.com", 443, true},
		{"GITHUB.COM.", 443, true},
		{"github.com", 80, false},
		{"api.github.com", 443, false},
		{"github.com.evil.example", 443, false},
		{"registry.npmjs.org", 443, true},
		{"a.b.npmjs.org", 443, true},
		{"npmjs.org", 443, false}, // a wildcard is for names below the domain
		{"evilnpmjs.org", 443, false},
		{"proxy.golang.org", 8443, true},
		{"proxy.golang.org", 443, false},
		{"140.82.112.3", 443, false}, // an address is not the name
	} {
		if got := Allows(rules, c.host, c.port); got != c.want {
			t.Errorf("Allows(%s:%d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
}

// A tenant narrows the platform's hosts, never widens them (R-SB-1): what
// survives is what both sides allow, by a covering rule or an open port.
func TestIntersect_HostsBothSidesAllow(t *testing.T) {
	for _, c := range []struct {
		name   string
		a      []string
		aPorts []int
		b      []string
		bPorts []int
		want   []string
	}{
		{"the same host", []string{"github.com"}, nil, []string{"github.com"}, nil, []string{"github.com:443"}},
		{"a host the other does not name", []string{"github.com"}, nil, []string{"evil.example"}, nil, nil},
		{"the narrower of two wildcards", []string{"*.example.com"}, nil, []string{"*.api.example.com"}, nil, []string{"*.api.example.com:443"}},
		{"a name under a wildcard", []string{"*.example.com"}, nil, []string{"a.example.com", "other.org"}, nil, []string{"a.example.com:443"}},
		{"a port open to every host keeps the other's host", []string{"github.com"}, []int{8181}, nil, []int{443}, []string{"github.com:443"}},
		{"another port is not the host's", []string{"github.com"}, nil, []string{"github.com:8443"}, nil, nil},
		{"a port open on both sides needs no host rule", []string{"github.com"}, []int{443}, nil, []int{443}, nil},
	} {
		if got := Intersect(c.a, c.aPorts, c.b, c.bPorts); !slices.Equal(got, c.want) {
			t.Errorf("%s: Intersect = %v, want %v", c.name, got, c.want)
		}
		if got := Intersect(c.b, c.bPorts, c.a, c.aPorts); !slices.Equal(got, c.want) {
			t.Errorf("%s (swapped): Intersect = %v, want %v", c.name, got, c.want)
		}
	}
}
