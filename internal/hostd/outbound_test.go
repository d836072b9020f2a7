package hostd

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// TestWebhook_HostdSignsOverHTTPSVerifiedByTheCABundle: hostd calls a
// webhook hook over HTTPS, trusting only the published caBundle, and signs
// the call with the mounted key for that hook and URL; the Service verifies
// the signature and the audience before it answers.
func TestWebhook_HostdSignsOverHTTPSVerifiedByTheCABundle(t *testing.T) {
	keyFile := testenv.TempFile(t, "signing-key", []byte(outbound.NewSecret()), 0o600)
	verified := 0
	var verifier *outbound.Verifier
	svc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifier.Verify(r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		verified++
		_, _ = io.WriteString(w, `{"allowed":true}`)
	}))
	defer svc.Close()
	verifier = outbound.NewVerifier(outbound.VerifyOptions{KeyFile: keyFile,
		Audience: outbound.Audience{Kind: outbound.AudienceHook, Name: "remote", URL: svc.URL + "/check"}})
	bundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: svc.Certificate().Raw})
	reg := contract.Registry{
		Tools: []contract.Tool{{Name: "run", Description: "Runs.", Extension: "policy"}},
		Hooks: []contract.Hook{{Extension: "policy", Name: "remote", Event: contract.EventBeforeToolCall, TimeoutSeconds: 5,
			Webhook: &contract.WebhookHook{URL: svc.URL + "/check", CABundle: bundle}}},
		Extensions: []string{"policy"},
	}
	before := func(opts Options) BeforeResponse {
		_, ts, _ := serveContext(t, contextData(t, reg), opts)
		var out BeforeResponse
		if code := post(t, ts.URL+"/v1/before", `{"call":{"id":"c1","name":"run","arguments":{}}}`, &out); code != 200 {
			t.Fatalf("status %d", code)
		}
		return out
	}
	if out := before(Options{SigningKeyFile: keyFile}); !out.Allowed || verified != 1 {
		t.Fatalf("signed HTTPS call: %+v (verified %d)", out, verified)
	}
	if out := before(Options{}); out.Allowed || verified != 1 {
		t.Fatalf("an unsigned call was allowed: %+v", out)
	}
	reg.Hooks[0].Webhook.CABundle = nil // system roots do not know the Service's CA
	if out := before(Options{SigningKeyFile: keyFile}); out.Allowed || verified != 1 {
		t.Fatalf("a certificate outside the caBundle was accepted: %+v", out)
	}
}
