package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// dataLink is the symlink through which a ConfigMap volume's keys resolve.
const dataLink = "..data"

// writeConfigMapVolume lays data out in dir the way the kubelet mounts a
// ConfigMap volume, and updates it the same way: the keys are written to a new
// timestamped directory, "..data" is swapped to it with one rename, each key
// is a symlink through "..data", and the previous directory is removed. A
// reader that resolves "..data" once sees either the old or the new data,
// never a mix; that is what hostd relies on to reload.
func writeConfigMapVolume(dir string, data map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, _ := os.Readlink(filepath.Join(dir, dataLink))
	ts := ".." + time.Now().UTC().Format("2006_01_02_15_04_05.000000000")
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		return fmt.Errorf("context volume %s: %w", dir, err)
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := os.WriteFile(filepath.Join(dir, ts, k), []byte(data[k]), 0o644); err != nil {
			return fmt.Errorf("context volume %s: key %s: %w", dir, k, err)
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(ts, tmp); err != nil {
		return fmt.Errorf("context volume %s: %w", dir, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataLink)); err != nil {
		return fmt.Errorf("context volume %s: %w", dir, err)
	}
	for _, k := range keys {
		link := filepath.Join(dir, k)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(dataLink, k), link); err != nil {
			return fmt.Errorf("context volume %s: key %s: %w", dir, k, err)
		}
	}
	if old != "" && old != ts {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			return fmt.Errorf("context volume %s: removing %s: %w", dir, old, err)
		}
	}
	return nil
}
