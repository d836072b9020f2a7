package hostd

import (
	"os"
	"path/filepath"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
)

// fingerprint identifies one version of the context directory cheaply: the
// target of the ConfigMap volume's ..data symlink plus size and mtime of each
// key. Any kubelet swap or file edit changes it; polling it costs a few stats.
type fingerprint struct {
	data  string
	files [4]fileStamp
}

type fileStamp struct {
	size    int64
	modTime time.Time
	missing bool
}

var contextKeys = [4]string{contract.KeySystemPrompt, contract.KeyManifest, contract.KeySkills, contract.KeyTemplates}

func takeFingerprint(dir string) fingerprint {
	return takeDirFingerprint(dir, contextKeys[:]...)
}

// takeDirFingerprint is the fingerprint of up to four keys of a directory.
func takeDirFingerprint(dir string, keys ...string) fingerprint {
	var fp fingerprint
	fp.data, _ = os.Readlink(filepath.Join(dir, "..data"))
	for i, key := range keys[:min(len(keys), len(fp.files))] {
		info, err := os.Stat(filepath.Join(dir, key))
		if err != nil {
			fp.files[i].missing = true
			continue
		}
		fp.files[i] = fileStamp{size: info.Size(), modTime: info.ModTime()}
	}
	return fp
}
