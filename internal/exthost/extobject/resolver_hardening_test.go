package extobject

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// TestDefaultResolver_OnlyServicesOfTheGivenNamespace: whatever the
// reference says, the URL is https://<name>.<namespace>.svc:<port><path>
// (http:// only when the reference says scheme HTTP) or an error. Names the API would refuse (dotted, URLs, userinfo, paths) are
// refused here too, because a fetched manifest never passes the API schema.
func TestDefaultResolver_OnlyServicesOfTheGivenNamespace(t *testing.T) {
	for _, tc := range []struct {
		name string
		ref  v1alpha1.ServiceReference
		want string // "" means an error
	}{
		{"plain", v1alpha1.ServiceReference{Name: "guard", Port: 8443, Path: "/check"}, "https://guard.team-a.svc:8443/check"},
		{"defaults are HTTPS", v1alpha1.ServiceReference{Name: "guard"}, "https://guard.team-a.svc:443/"},
		{"explicit HTTPS", v1alpha1.ServiceReference{Name: "guard", Scheme: v1alpha1.SchemeHTTPS, CABundle: []byte("pem")}, "https://guard.team-a.svc:443/"},
		{"plain HTTP only when declared", v1alpha1.ServiceReference{Name: "guard", Port: 8080, Scheme: v1alpha1.SchemeHTTP}, "http://guard.team-a.svc:8080/"},
		{"HTTP with a caBundle", v1alpha1.ServiceReference{Name: "guard", Scheme: v1alpha1.SchemeHTTP, CABundle: []byte("pem")}, ""},
		{"unknown scheme", v1alpha1.ServiceReference{Name: "guard", Scheme: "FILE"}, ""},
		{"dotted name into another namespace", v1alpha1.ServiceReference{Name: "guard.team-b"}, ""},
		{"metadata address with a path", v1alpha1.ServiceReference{Name: "169.254.169.254/latest/meta-data?"}, ""},
		{"URL", v1alpha1.ServiceReference{Name: "http://evil.example.com"}, ""},
		{"userinfo", v1alpha1.ServiceReference{Name: "x@evil.example.com"}, ""},
		{"fragment", v1alpha1.ServiceReference{Name: "evil.example.com#"}, ""},
		{"uppercase", v1alpha1.ServiceReference{Name: "Guard"}, ""},
		{"leading digit", v1alpha1.ServiceReference{Name: "1guard"}, ""},
		{"port out of range", v1alpha1.ServiceReference{Name: "guard", Port: 70000}, ""},
		{"path with ..", v1alpha1.ServiceReference{Name: "guard", Path: "/a/../../b"}, ""},
		{"relative path", v1alpha1.ServiceReference{Name: "guard", Path: "@evil/"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DefaultResolver("team-a", tc.ref)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("resolved to %s, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("= %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := DefaultResolver("team-a.evil", v1alpha1.ServiceReference{Name: "guard"}); err == nil {
		t.Error("a dotted namespace was accepted")
	}
}

// TestFetchedManifestCannotAimAWebhookElsewhere is the regression test for a
// bug: a service-backed extension's manifest is not checked by the API
// schema, and a webhook Service name such as "169.254.169.254/x?" compiled
// into a hook calling that host. It is now rejected at load.
func TestFetchedManifestCannotAimAWebhookElsewhere(t *testing.T) {
	spec, err := DecodeManifest([]byte(`{"hooks":[{"name":"h","event":"BeforeToolCall","timeoutSeconds":1,` +
		`"webhook":{"service":{"name":"169.254.169.254/latest/meta-data?","port":80,"path":"/"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, errs := compileSpec(spec, nil, specContext{extension: "x", namespace: "team-a", resolve: DefaultResolver})
	if len(errs) == 0 {
		t.Fatal("a webhook aimed at another host compiled")
	}
	if msg := errs[0].Error(); !strings.Contains(msg, "webhook.service") {
		t.Errorf("error %q does not name the field", msg)
	}
}
