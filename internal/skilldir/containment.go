package skilldir

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/loadout-dev/loadout/internal/resources"
)

// relInside reports whether a relative, cleaned path stays below its base:
// like Node's path.relative test, it must be neither absolute nor start with a
// ".." segment. A string-prefix test would be wrong ("..x" is a fine name and
// /srv/review-old is not inside /srv/review).
func relInside(rel string) bool {
	return !path.IsAbs(rel) && !filepath.IsAbs(rel) && rel != ".." &&
		!strings.HasPrefix(rel, "../") && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// within reports whether target lies inside root (or is root), judged on the
// cleaned paths as given: no symlink is followed.
func within(root, target string) bool {
	rel, err := filepath.Rel(root, target)
	return err == nil && relInside(rel)
}

// resolveInDir applies both halves of rule R-ACT-4 to a request against a skill
// directory: lexical containment of the joined path, then containment of the
// symlink-resolved file in the symlink-resolved root. It returns the canonical
// path of a regular file.
func resolveInDir(dir, request string) (string, error) {
	clean, err := resources.CleanRequest(request)
	if err != nil {
		return "", err
	}
	joined := filepath.Join(dir, filepath.FromSlash(clean))
	if !within(dir, joined) {
		return "", errors.New("path leaves the skill root")
	}
	realRoot, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("resolve skill root: %w", err)
	}
	realFile, err := filepath.EvalSymlinks(joined)
	if err != nil {
		return "", fmt.Errorf("resolve file: %w", err)
	}
	if !within(realRoot, realFile) {
		return "", errors.New("path resolves outside the skill root through a symlink")
	}
	info, err := os.Stat(realFile)
	if err != nil {
		return "", fmt.Errorf("stat file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	return realFile, nil
}
