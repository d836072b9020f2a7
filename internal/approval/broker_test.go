package approval_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/approval"
	"github.com/loadout-dev/loadout/internal/approval/approvaltest"
)

func request(command string) approval.Request {
	args := map[string]any{"command": command}
	b, _ := json.Marshal(args)
	return approval.Request{Workspace: "team-a/dev", Tool: "bash", Arguments: args, Digest: string(b), Extension: "prod-guard", Hook: "apply",
		ApproverGroups: []string{"platform:approvers"}, Expiry: time.Minute, Wait: 300 * time.Millisecond}
}

// What hostd honours (R-APV-4): its own Approval for this call, approved by
// someone else, once; an object replaced under the same name, one decided by
// the requester, or a decision after expiry is never a yes.
func TestBroker_HonoursOnlyItsOwnApprovalForTheCallOnceInTime(t *testing.T) { // R-APV-4
	approve := approvaltest.Approve
	for _, tc := range []struct {
		name  string
		edit  func(*approval.Object)
		state string
	}{
		{"approved by an approver", approve("alice"), approval.Approved},
		{"denied", func(o *approval.Object) {
			o.Status.Decision, o.Status.DecidedBy, o.Status.Reason = approval.Denied, "alice", "no"
		}, approval.Denied},
		{"replaced under the same name", func(o *approval.Object) { approve("alice")(o); o.Metadata.UID = "someone-else" }, approval.Deleted},
		{"decided by the requester", approve(approvaltest.User), approval.Denied},
		{"its call changed", func(o *approval.Object) { approve("alice")(o); o.Spec.Call.ArgumentsDigest = "other" }, approval.Denied},
		{"its approver groups changed", func(o *approval.Object) { approve("alice")(o); o.Spec.ApproverGroups = []string{"devs"} }, approval.Denied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, api := approvaltest.NewBroker(t, nil)
			req := request("terraform apply")
			if out := b.Decide(context.Background(), req, nil); out.State != approval.Pending {
				t.Fatalf("undecided: %+v", out)
			}
			name := api.Names()[0]
			if o := api.Get(name); o.Spec.Requester.User != approvaltest.User || o.Spec.Requester.Pod != "agent-0" || o.Spec.Call.ArgumentsDigest != req.Digest {
				t.Fatalf("the Approval = %+v", o.Spec)
			}
			api.Change(name, tc.edit)
			out := b.Decide(context.Background(), req, nil)
			if out.State != tc.state || out.Name != name {
				t.Fatalf("got %+v, want %s", out, tc.state)
			}
			// hostd's own refusal names no one as having denied the call;
			// an approver's denial names the approver.
			msg := out.Message("prod-guard/apply", "sure?", req.ApproverGroups)
			switch refused := tc.state == approval.Denied && tc.name != "denied"; {
			case refused && (!out.Refused || strings.Contains(msg, "denied by") || !strings.Contains(msg, "not honoured by hostd")):
				t.Errorf("hostd's refusal: %+v, message %q", out, msg)
			case tc.name == "denied" && (out.Refused || !strings.Contains(msg, "was denied by alice: no")):
				t.Errorf("an approver's denial: %+v, message %q", out, msg)
			}
			if tc.state != approval.Approved {
				return
			}
			// Spent: the same call asks again with a new Approval.
			again := b.Decide(context.Background(), req, nil)
			if again.State != approval.Pending || again.Name == out.Name {
				t.Errorf("a spent Approval: %+v", again)
			}
		})
	}

	t.Run("decided after it expired", func(t *testing.T) {
		now := time.Now()
		b, api := approvaltest.NewBroker(t, func() time.Time { return now })
		req := request("terraform apply")
		first := b.Decide(context.Background(), req, nil)
		api.Change(first.Name, approve("alice"))
		now = now.Add(2 * time.Minute)
		if out := b.Decide(context.Background(), req, nil); out.State != approval.Pending || out.Name == first.Name {
			t.Errorf("after expiry: %+v, want a new, pending Approval", out)
		}
	})
}

func TestTokenIdentity_RefusesWhatIsNotAServiceAccountToken(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not a JWT":    "abc",
		"bad base64":   "a.!!!.c",
		"not JSON":     "a." + base64.RawURLEncoding.EncodeToString([]byte("[")) + ".c",
		"a user token": "a." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"alice"}`)) + ".c",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if id, err := approval.TokenIdentity(path); err == nil {
			t.Errorf("%s: %+v, want an error", name, id)
		}
	}
	if id, err := approval.TokenIdentity(approvaltest.Token(t)); err != nil || id.User != approvaltest.User || id.Pod != "agent-0" || id.PodUID != approvaltest.PodUID || id.Namespace != "team-a" {
		t.Errorf("a pod's token: %+v %v", id, err)
	}
}
