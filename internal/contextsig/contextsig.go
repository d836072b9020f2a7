package contextsig

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Subject is what a signature binds a context hash to: one Workspace
// instance and the ConfigMap it publishes to.
type Subject struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// UID is the Workspace's metadata.uid: a context signed for a deleted
	// Workspace does not carry the UID of its same-named successor.
	UID string `json:"uid"`
	// ConfigMap is the name of the ConfigMap the context is published in. A
	// copy of a signed context under another name (an old one, replayed to
	// roll policy back) does not verify for the pod that mounts that name.
	ConfigMap string `json:"configMap"`
}

func (s Subject) String() string { return s.Namespace + "/" + s.Name }

// Document is the signature key's content.
type Document struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Workspace  Subject     `json:"workspace"`
	Hash       string      `json:"hash"`
	Signatures []Signature `json:"signatures"`
}

// Signature is one key's signature.
type Signature struct {
	// KeyID is the first 16 hex digits of the SHA-256 of the raw public key.
	KeyID string `json:"keyID"`
	// Value is the base64 (standard, padded) Ed25519 signature of Message.
	Value string `json:"value"`
}

// DocumentKind and apiVersion of a signature document.
const (
	APIVersion   = "loadout.dev/v1alpha1"
	DocumentKind = "ContextSignature"
)

// maxDocumentBytes bounds a signature document before it is parsed: a key
// set has a handful of keys, and hostd reads this from a mounted file.
const maxDocumentBytes = 64 << 10

// maxKeys bounds a key set and a trust anchor.
const maxKeys = 16

// Message is the exact byte string each key signs. Fields are separated by
// NUL, which none of them may contain, so no two subjects share a message.
func Message(hash string, s Subject) []byte {
	return []byte("loadout.dev/context-signature/v1\x00" + hash + "\x00" + s.Namespace + "\x00" + s.Name + "\x00" + s.UID + "\x00" + s.ConfigMap)
}

// KeyID names a public key.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Signer signs with every key of a key set.
type Signer struct {
	keys []ed25519.PrivateKey // sorted by key id
}

// NewSigner returns a Signer over keys (at least one, at most 16).
func NewSigner(keys []ed25519.PrivateKey) (*Signer, error) {
	if len(keys) == 0 {
		return nil, errors.New("context signing: the key set is empty")
	}
	if len(keys) > maxKeys {
		return nil, fmt.Errorf("context signing: %d keys, at most %d", len(keys), maxKeys)
	}
	s := &Signer{keys: slices.Clone(keys)}
	slices.SortFunc(s.keys, func(a, b ed25519.PrivateKey) int {
		return strings.Compare(KeyID(a.Public().(ed25519.PublicKey)), KeyID(b.Public().(ed25519.PublicKey)))
	})
	s.keys = slices.CompactFunc(s.keys, func(a, b ed25519.PrivateKey) bool { return a.Equal(b) })
	return s, nil
}

// Sign returns the signature document of hash for subject. Ed25519 is
// deterministic, so the same inputs give the same bytes (and the published
// ConfigMap does not change in steady state).
func (s *Signer) Sign(hash string, subject Subject) []byte {
	doc := Document{APIVersion: APIVersion, Kind: DocumentKind, Workspace: subject, Hash: hash}
	msg := Message(hash, subject)
	for _, k := range s.keys {
		doc.Signatures = append(doc.Signatures, Signature{
			KeyID: KeyID(k.Public().(ed25519.PublicKey)),
			Value: base64.StdEncoding.EncodeToString(ed25519.Sign(k, msg)),
		})
	}
	b, _ := json.Marshal(doc) // plain strings always marshal
	return b
}

// TrustAnchor returns the public keys of the set in the trust-anchor text
// format (ParseTrustAnchor), in key-id order.
func (s *Signer) TrustAnchor() string {
	var b strings.Builder
	for _, k := range s.keys {
		b.WriteString(FormatPublicKey(k.Public().(ed25519.PublicKey)))
		b.WriteByte('\n')
	}
	return b.String()
}

// KeyIDs lists the key ids of the set, sorted.
func (s *Signer) KeyIDs() []string {
	ids := make([]string, 0, len(s.keys))
	for _, k := range s.keys {
		ids = append(ids, KeyID(k.Public().(ed25519.PublicKey)))
	}
	return ids
}

// FormatPublicKey is one trust-anchor line: "ed25519 " and the base64 raw key.
func FormatPublicKey(pub ed25519.PublicKey) string {
	return "ed25519 " + base64.StdEncoding.EncodeToString(pub)
}

// Verifier checks signature documents against a trust anchor.
type Verifier struct {
	keys map[string]ed25519.PublicKey // by key id
}

// ParseTrustAnchor reads a trust anchor: one public key per line, as
// "ed25519 <base64 raw key>"; blank lines and lines starting with # are
// ignored. An anchor without a key is an error: it would refuse everything,
// which is a misconfiguration, not a policy.
func ParseTrustAnchor(text string) (*Verifier, error) {
	v := &Verifier{keys: map[string]ed25519.PublicKey{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		alg, key, ok := strings.Cut(l, " ")
		if !ok || alg != "ed25519" {
			return nil, fmt.Errorf("trust anchor line %d: want \"ed25519 <base64 public key>\"", line)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
		if err != nil || len(raw) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("trust anchor line %d: not a base64 Ed25519 public key (%d bytes)", line, ed25519.PublicKeySize)
		}
		if len(v.keys) == maxKeys {
			return nil, fmt.Errorf("trust anchor: more than %d keys", maxKeys)
		}
		v.keys[KeyID(raw)] = ed25519.PublicKey(raw)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trust anchor: %w", err)
	}
	if len(v.keys) == 0 {
		return nil, errors.New("trust anchor: no public key")
	}
	return v, nil
}

// KeyIDs lists the anchor's key ids, sorted.
func (v *Verifier) KeyIDs() []string {
	ids := make([]string, 0, len(v.keys))
	for id := range v.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// VerifyError says why a context was refused.
type VerifyError struct{ Reason, Message string }

func (e *VerifyError) Error() string { return e.Message }

// Reasons of a VerifyError, for metrics and /readyz.
const (
	ReasonUnsigned       = "Unsigned"
	ReasonMalformed      = "MalformedSignature"
	ReasonHashMismatch   = "HashMismatch"
	ReasonWrongWorkspace = "WrongWorkspace"
	ReasonWrongConfigMap = "WrongConfigMap"
	ReasonBadSignature   = "BadSignature"
)

func refuse(reason, format string, args ...any) error {
	return &VerifyError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Verify checks doc, the signature document published beside a context of
// hash for Workspace want (namespace and name, and the ConfigMap name unless
// want leaves it empty; the UID comes from the document, and is covered by
// its signature). It succeeds when one signature
// of a key in the anchor verifies. An empty doc is unsigned.
func (v *Verifier) Verify(doc []byte, hash string, want Subject) error {
	if len(doc) == 0 {
		return refuse(ReasonUnsigned, "the context %s is unsigned", hash)
	}
	if len(doc) > maxDocumentBytes {
		return refuse(ReasonMalformed, "the signature document is %d bytes, at most %d", len(doc), maxDocumentBytes)
	}
	var d Document
	if err := json.Unmarshal(doc, &d); err != nil || d.Kind != DocumentKind || d.APIVersion != APIVersion {
		return refuse(ReasonMalformed, "the signature document is not a %s/%s", APIVersion, DocumentKind)
	}
	if d.Hash != hash {
		return refuse(ReasonHashMismatch, "the signature is for context %s, the data hashes to %s", d.Hash, hash)
	}
	if d.Workspace.Namespace != want.Namespace || d.Workspace.Name != want.Name {
		return refuse(ReasonWrongWorkspace, "the context is signed for Workspace %s, this host serves Workspace %s", d.Workspace, want)
	}
	if want.ConfigMap != "" && d.Workspace.ConfigMap != want.ConfigMap {
		return refuse(ReasonWrongConfigMap, "the context is signed for ConfigMap %s, this host serves ConfigMap %s", d.Workspace.ConfigMap, want.ConfigMap)
	}
	msg := Message(d.Hash, d.Workspace)
	for _, s := range d.Signatures {
		pub, ok := v.keys[s.KeyID]
		if !ok {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(s.Value)
		if err == nil && ed25519.Verify(pub, msg, sig) {
			return nil
		}
	}
	ids := make([]string, 0, len(d.Signatures))
	for _, s := range d.Signatures {
		ids = append(ids, s.KeyID)
	}
	return refuse(ReasonBadSignature, "no signature of context %s verifies against the trust anchor (signed by keys [%s], trusted keys [%s])",
		hash, strings.Join(ids, ", "), strings.Join(v.KeyIDs(), ", "))
}

// MarshalPrivateKey encodes a key as PKCS #8 PEM, the form `openssl genpkey
// -algorithm ed25519` writes, so an operator can add a key by hand.
func MarshalPrivateKey(k ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKey decodes a PKCS #8 PEM Ed25519 private key.
func ParsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM \"PRIVATE KEY\" block")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T, want an Ed25519 key", k)
	}
	return ek, nil
}

// EpochSubject is what a namespace's policy epoch (contract.PolicyEpoch) is
// signed for: the namespace and the epoch ConfigMap, with no Workspace name
// and no UID. A Workspace's name is never empty, so an epoch's signature
// never passes for a context's (hostd verifies contexts for the non-empty
// name it serves), nor a context's for an epoch's.
func EpochSubject(namespace, configMap string) Subject {
	return Subject{Namespace: namespace, ConfigMap: configMap}
}

// SignEpoch signs the hash of a namespace's epoch document
// (contract.EpochHash) for EpochSubject.
func (s *Signer) SignEpoch(hash, namespace, configMap string) []byte {
	return s.Sign(hash, EpochSubject(namespace, configMap))
}

// VerifyEpoch checks the signature document of an epoch of hash for
// namespace and configMap, as Verify checks a context's.
func (v *Verifier) VerifyEpoch(doc []byte, hash, namespace, configMap string) error {
	if namespace == "" || configMap == "" {
		return refuse(ReasonWrongWorkspace, "the policy epoch needs a namespace and a ConfigMap name to be verified for")
	}
	return v.Verify(doc, hash, EpochSubject(namespace, configMap))
}
