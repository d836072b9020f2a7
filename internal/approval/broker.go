package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Request is a call a hook asked about, to be decided in the cluster.
type Request struct {
	Workspace string
	Tool      string
	Arguments map[string]any
	// Digest is the arguments' digest (ledger.Digest): what the decision
	// must be for.
	Digest    string
	Extension string
	Hook      string
	Question  string
	// ApproverGroups, Expiry and Wait are the hook's approval policy.
	ApproverGroups []string
	Expiry         time.Duration
	Wait           time.Duration
}

// Outcome is what became of a Request.
type Outcome struct {
	// Name is the Approval's; empty when none could be created.
	Name string
	// State: Approved (run the call), Denied, Expired, Pending (the wait
	// ran out; the same call asked again waits on the same Approval),
	// Reused (the Approval was spent on an earlier call), Deleted, or
	// Unavailable (the API server refused or could not be reached).
	State     string
	DecidedBy string
	// Reason is the approver's reason, or why hostd could not ask.
	Reason string
	// Refused: hostd itself refused the Approval's decision (not for this
	// call, its request changed, decided by its requester), so State is
	// Denied and no approver denied anything.
	Refused bool
}

// Message is what the agent reads for an outcome that is not Approved:
// decider is the asking hook (extension/hook), question its question and
// groups its approver groups.
func (o Outcome) Message(decider, question string, groups []string) string {
	switch o.State {
	case Pending:
		return fmt.Sprintf("waiting for approval %s (%s: %s) by %v: %s; ask again with the same call to keep waiting",
			o.Name, decider, question, groups, o.Reason)
	case Denied:
		if o.Refused {
			// Nobody denied: hostd does not honour what the object
			// says, so naming its decidedBy would say the requester (or
			// whoever wrote it) denied the call.
			return fmt.Sprintf("approval %s is not honoured by hostd: %s; the call is blocked (ask again for a new Approval)", o.Name, o.Reason)
		}
		reason := o.Reason
		if reason == "" {
			reason = "no reason given"
		}
		by := o.DecidedBy
		if by == "" {
			by = "an approver"
		}
		return fmt.Sprintf("approval %s was denied by %s: %s; the call is blocked", o.Name, by, reason)
	case Unavailable:
		return fmt.Sprintf("hook %s asks the cluster's approvers about this call, and hostd could not ask: %s; the call is blocked", decider, o.Reason)
	default:
		return fmt.Sprintf("approval %s: %s (%s); the call is blocked", o.Name, o.Reason, o.State)
	}
}

// The states of an Outcome besides Approved, Denied and Pending.
const (
	Expired     = "Expired"
	Reused      = "Reused"
	Deleted     = "Deleted"
	Unavailable = "Unavailable"
)

// maxOpen bounds the Approvals one hostd waits on at once.
const maxOpen = 256

// Broker is hostd's table of the Approvals it created. Only an Approval in
// this table (its name and UID, for this call's digest) is ever honoured,
// once: an Approval hostd did not create, one a restarted hostd created
// before, or one already spent is never a yes.
type Broker struct {
	// broken, when set, is why this hostd cannot ask the cluster: every
	// ask is Unavailable with it.
	broken error

	client   *Client
	identity func() (Identity, error)
	now      func() time.Time

	mu   sync.Mutex
	open map[string]*entry // by callKey
}

type entry struct {
	name, uid string
	req       Request
	// requester is the identity that created it.
	requester string
	expires   time.Time
	spent     bool
}

// NewBroker returns a Broker creating Approvals with client; identity says
// who the client's token is (read at each creation, as the kubelet rotates
// it). now nil means time.Now.
func NewBroker(client *Client, identity func() (Identity, error), now func() time.Time) *Broker {
	if now == nil {
		now = time.Now
	}
	return &Broker{client: client, identity: identity, now: now, open: map[string]*entry{}}
}

// Broken is a Broker that cannot reach the cluster (its configuration is
// incomplete): every ask it is given is Unavailable, naming err. hostd
// starts and enforces the rest of its policy meanwhile.
func Broken(err error) *Broker { return &Broker{broken: err, open: map[string]*entry{}} }

// callKey identifies a call and the hook that asked: the same call asked
// again waits on the same open Approval.
func callKey(r Request) string {
	return r.Workspace + "\x00" + r.Extension + "\x00" + r.Hook + "\x00" + r.Tool + "\x00" + r.Digest
}

// Decide asks the cluster about r and waits, bounded by r.Wait and the
// Approval's expiry, for a decision it can honour. announce, when set, is
// told the Approval's name as soon as it exists.
func (b *Broker) Decide(ctx context.Context, r Request, announce func(name string)) Outcome {
	if b.broken != nil {
		return Outcome{State: Unavailable, Reason: b.broken.Error()}
	}
	e, err := b.entryFor(ctx, r)
	if err != nil {
		return Outcome{State: Unavailable, Reason: err.Error()}
	}
	if announce != nil {
		announce(e.name)
	}
	wait := r.Wait
	if left := e.expires.Sub(b.now()); left < wait {
		wait = left
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	o, err := b.client.WaitDecided(wctx, e.name)
	switch {
	case errors.Is(err, ErrDeleted):
		b.close(r, e)
		return Outcome{Name: e.name, State: Deleted, Reason: "the Approval was deleted before it was decided"}
	case err != nil && wctx.Err() != nil && ctx.Err() == nil:
		if !b.now().Before(e.expires) {
			b.close(r, e)
			return Outcome{Name: e.name, State: Expired, Reason: "no decision before it expired at " + e.expires.UTC().Format(time.RFC3339)}
		}
		return Outcome{Name: e.name, State: Pending, Reason: fmt.Sprintf("no decision within %s", r.Wait)}
	case err != nil:
		return Outcome{Name: e.name, State: Unavailable, Reason: err.Error()}
	}
	return b.judge(r, e, o)
}

// judge honours o only as the decision of e, for r, once, before expiry.
func (b *Broker) judge(r Request, e *entry, o *Object) Outcome {
	out := Outcome{Name: e.name, DecidedBy: o.Status.DecidedBy, Reason: o.Status.Reason}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cur := b.open[callKey(r)]; cur == e {
		delete(b.open, callKey(r))
	}
	switch {
	case o.Metadata.UID != e.uid:
		// Deleted and created again under the same name: not ours.
		out.State, out.Reason = Deleted, "the Approval "+e.name+" was replaced by another object of the same name"
	case e.spent:
		out.State, out.Reason = Reused, "the Approval was already used for an earlier call"
	case o.Spec.Call.ArgumentsDigest != e.req.Digest || o.Spec.Call.Tool != e.req.Tool || e.req.Digest != r.Digest:
		out.State, out.Reason, out.Refused = Denied, "the Approval is not for this call", true
	case !slices.Equal(o.Spec.ApproverGroups, e.req.ApproverGroups) || o.Spec.Requester.User != e.requester:
		out.State, out.Reason, out.Refused = Denied, "the Approval's request was changed", true
	case o.Status.DecidedBy == "" || o.Status.DecidedBy == e.requester:
		out.State, out.Reason, out.Refused = Denied, "the Approval was decided by its requester, never an approver", true
	case !b.now().Before(e.expires):
		out.State, out.Reason = Expired, "decided after it expired at "+e.expires.UTC().Format(time.RFC3339)
	case o.Status.Decision == Approved:
		e.spent = true
		out.State = Approved
	default:
		e.spent = true
		out.State = Denied
	}
	return out
}

func (b *Broker) close(r Request, e *entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[callKey(r)] == e {
		delete(b.open, callKey(r))
	}
}

// entryFor returns the open Approval for r's call, creating one.
func (b *Broker) entryFor(ctx context.Context, r Request) (*entry, error) {
	key := callKey(r)
	now := b.now()
	b.mu.Lock()
	if e := b.open[key]; e != nil && !e.spent && now.Before(e.expires) {
		b.mu.Unlock()
		return e, nil
	}
	for k, e := range b.open {
		if e.spent || !now.Before(e.expires) {
			delete(b.open, k)
		}
	}
	full := len(b.open) >= maxOpen
	b.mu.Unlock()
	if full {
		return nil, fmt.Errorf("hostd waits on %d Approvals already", maxOpen)
	}
	id, err := b.identity()
	if err != nil {
		return nil, fmt.Errorf("hostd's identity for Approvals: %w", err)
	}
	// Seconds: the API server stores metav1.Time at that precision.
	expires := now.Add(r.Expiry).Truncate(time.Second)
	o := &Object{
		Metadata: Meta{GenerateName: approvalPrefix(r.Tool), OwnerReferences: podOwner(id)},
		Spec: Spec{
			Workspace:      r.Workspace,
			Call:           Call{Tool: r.Tool, Arguments: r.Arguments, ArgumentsDigest: r.Digest},
			Hook:           Hook{Extension: r.Extension, Name: r.Hook, Question: truncate(r.Question, 4096)},
			Requester:      Requester{Pod: id.Pod, ServiceAccount: id.ServiceAccount, User: id.User},
			ApproverGroups: slices.Clone(r.ApproverGroups),
			ExpiresAt:      expires.UTC(),
		},
	}
	created, err := b.client.Create(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("creating an Approval in namespace %s: %w", b.client.Namespace(), err)
	}
	e := &entry{name: created.Metadata.Name, uid: created.Metadata.UID, req: r, requester: id.User, expires: expires}
	b.mu.Lock()
	b.open[key] = e
	b.mu.Unlock()
	return e, nil
}

// podOwner makes the requesting pod an Approval's owner, so the garbage
// collector deletes a pod's Approvals with it: hostd may not delete them
// (it may only create, get and watch), and a long-lived agent's spent ones
// otherwise pile up until its namespace's quota refuses the next ask. Not
// blockOwnerDeletion: that would need delete on the pod.
func podOwner(id Identity) []OwnerReference {
	if id.Pod == "" || id.PodUID == "" {
		return nil
	}
	return []OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: id.Pod, UID: id.PodUID}}
}

// approvalPrefix is a readable generateName: the tool's name cut to a DNS
// label's characters.
func approvalPrefix(tool string) string {
	out := make([]byte, 0, 24)
	for i := 0; i < len(tool) && len(out) < 24; i++ {
		c := tool[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			out = append(out, c)
		case c >= 'A' && c <= 'Z':
			out = append(out, c+'a'-'A')
		case len(out) > 0 && out[len(out)-1] != '-':
			out = append(out, '-')
		}
	}
	if len(out) == 0 || out[0] < 'a' {
		out = append([]byte("call-"), out...)
	}
	if out[len(out)-1] != '-' {
		out = append(out, '-')
	}
	return string(out)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		n--
	}
	return s[:n]
}
