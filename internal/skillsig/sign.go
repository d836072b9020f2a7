package skillsig

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loadout-dev/loadout/internal/sigcheck"
)

// BundleMediaType is a Sigstore bundle's media type (sigcheck.BundleMediaType).
const BundleMediaType = sigcheck.BundleMediaType

// Signer signs with an ECDSA P-256 key (the Sigstore default).
type Signer struct {
	key  *ecdsa.PrivateKey
	hint []byte
}

// ParseSigner reads a PEM private key: PKCS#8 ("PRIVATE KEY") or SEC 1
// ("EC PRIVATE KEY"), ECDSA P-256.
func ParseSigner(pemBytes []byte) (*Signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block: want an ECDSA P-256 private key in PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q: want PRIVATE KEY or EC PRIVATE KEY", block.Type)
	}
	if err != nil {
		return nil, err
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("want an ECDSA P-256 private key")
	}
	return newSigner(ec)
}

// GenerateSigner makes a new key (tests, and `loadout push` users who
// want one: MarshalPrivateKey saves it).
func GenerateSigner() (*Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return newSigner(key)
}

func newSigner(key *ecdsa.PrivateKey) (*Signer, error) {
	hint, err := keyHint(key.Public())
	if err != nil {
		return nil, err
	}
	return &Signer{key: key, hint: []byte(hint)}, nil
}

// keyHint names a public key in a bundle (sigcheck.KeyID), so the
// verifier finds the key that signed.
func keyHint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	return sigcheck.KeyID(der), nil
}

// MarshalPrivateKey is the signer's key as PKCS#8 PEM.
func (s *Signer) MarshalPrivateKey() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// PublicKeyPEM is the public key a platform trusts to accept what s signs.
func (s *Signer) PublicKeyPEM() ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(s.key.Public())
}

// Sign returns the Sigstore bundle (JSON) of a signature over manifest, a
// skill artifact's manifest bytes: their SHA-256 is the digest a Skill
// pins, so the bundle binds the key to exactly that artifact.
func (s *Signer) Sign(manifest []byte) ([]byte, error) {
	b, err := sign.Bundle(&sign.PlainData{Data: manifest}, keypair{s}, sign.BundleOptions{})
	if err != nil {
		return nil, err
	}
	return protojson.Marshal(b)
}

// keypair is s as sigstore-go's sign.Keypair.
type keypair struct{ s *Signer }

func (keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (k keypair) GetHint() []byte                { return k.s.hint }
func (keypair) GetKeyAlgorithm() string          { return "ECDSA" }
func (k keypair) GetPublicKey() crypto.PublicKey { return k.s.key.Public() }
func (k keypair) GetPublicKeyPem() (string, error) {
	b, err := k.s.PublicKeyPEM()
	return string(b), err
}

// SignData signs SHA-256(data) and returns the signature and that digest.
func (k keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	digest := sha256.Sum256(data)
	sig, err := k.s.key.Sign(rand.Reader, digest[:], crypto.SHA256)
	return sig, digest[:], err
}
