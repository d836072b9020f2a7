package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The SBOM is an SPDX 2.3 JSON document listing the Go modules linked into
// an image's entrypoint binary, read from the binary itself (its module
// graph as the linker recorded it), so it describes exactly what ships.
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	SPDXID           string            `json:"SPDXID"`
	Name             string            `json:"name"`
	VersionInfo      string            `json:"versionInfo,omitempty"`
	DownloadLocation string            `json:"downloadLocation"`
	FilesAnalyzed    bool              `json:"filesAnalyzed"`
	Checksums        []spdxChecksum    `json:"checksums,omitempty"`
	ExternalRefs     []spdxExternalRef `json:"externalRefs,omitempty"`
}

type spdxChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

type spdxExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// writeSBOM writes the SPDX document of img, read from binary, to file.
func writeSBOM(file string, img Image, binary string, created time.Time) error {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("reading the module graph of %s: %w", binary, err)
	}
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: img.Repository,
		CreationInfo: spdxCreationInfo{Created: created.UTC().Format(time.RFC3339), Creators: []string{"Tool: loadout-hack-images"}},
	}
	root := spdxPackage{SPDXID: "SPDXRef-Package-image", Name: img.Repository, DownloadLocation: "NOASSERTION"}
	doc.Packages = append(doc.Packages, root)
	doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", root.SPDXID})
	add := func(path, version, sum string) {
		p := spdxPackage{SPDXID: "SPDXRef-Package-" + spdxID(path), Name: path, VersionInfo: version, DownloadLocation: "NOASSERTION",
			ExternalRefs: []spdxExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + path + versionSuffix(version)}}}
		if h, ok := strings.CutPrefix(sum, "h1:"); ok {
			p.Checksums = []spdxChecksum{{Algorithm: "SHA256", ChecksumValue: base64ToHex(h)}}
		}
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelationship{root.SPDXID, "CONTAINS", p.SPDXID})
	}
	add("stdlib", strings.TrimPrefix(info.GoVersion, "go"), "")
	add(info.Main.Path, info.Main.Version, info.Main.Sum)
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		add(d.Path, d.Version, d.Sum)
	}
	// The namespace must be unique per document: derive it from the content.
	body, err := json.Marshal(doc.Packages)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	doc.DocumentNamespace = "https://loadout.dev/spdx/" + img.Name + "/" + hex.EncodeToString(sum[:8])
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, append(out, '\n'), 0o644)
}

func versionSuffix(v string) string {
	if v == "" || v == "(devel)" {
		return ""
	}
	return "@" + v
}

// spdxID turns a module path into the characters an SPDX id may hold.
func spdxID(path string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, path)
}

// base64ToHex turns a go.sum h1 hash (base64 SHA-256) into hex; a malformed
// one gives "".
func base64ToHex(b64 string) string {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return ""
	}
	return hex.EncodeToString(b)
}
