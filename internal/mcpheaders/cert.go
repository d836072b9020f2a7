package mcpheaders

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// certValidity is how long the endpoint's certificate lives. Agent pods
// trust it from their creation (the agent-pod policy injects it), so it
// outlives them by far; rotate by deleting the Secret (docs/security.md).
const certValidity = 10 * 365 * 24 * time.Hour

// NewServingCert returns a self-signed certificate (it is its own CA: hostd
// trusts exactly this certificate) for the DNS names, and its key, in PEM.
func NewServingCert(dnsNames []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: dnsNames[0], Organization: []string{"loadout"}},
		DNSNames:              dnsNames,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

// CertNames checks that certPEM is a certificate valid at now for host.
func CertNames(certPEM []byte, host string, now time.Time) error {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return fmt.Errorf("no PEM certificate")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return err
	}
	if now.After(c.NotAfter) {
		return fmt.Errorf("the certificate expired at %s", c.NotAfter.UTC().Format(time.RFC3339))
	}
	return c.VerifyHostname(host)
}
