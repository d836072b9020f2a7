package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// AddSkills creates total project Skills spread evenly over the fleet's
// namespaces, waits until the manager is idle and every Workspace has
// published them, and returns the step's writes.
func (f *Fleet) AddSkills(ctx context.Context, total int, timeout time.Duration) (*Phase, error) {
	before := f.e.Writes.Snapshot()
	start := time.Now()
	per := total / len(f.Namespaces)
	if err := parallel(ctx, 16, per*len(f.Namespaces), func(ctx context.Context, i int) error {
		ns := f.Namespaces[i%len(f.Namespaces)]
		return f.e.Client.Create(ctx, projectSkill(ns, fmt.Sprintf("skill-%05d", i/len(f.Namespaces)), i))
	}); err != nil {
		return nil, err
	}
	if err := f.e.Settle(ctx, 5*time.Second, timeout); err != nil {
		return nil, err
	}
	// Every Workspace sees its namespace's skills, project-notes and shared.
	var wsl v1alpha1.WorkspaceList
	if err := f.e.Client.List(ctx, &wsl); err != nil {
		return nil, err
	}
	for _, ws := range wsl.Items {
		if ws.Namespace == IsolatedNS {
			continue
		}
		if ws.Status.Catalog == nil || int(ws.Status.Catalog.Skills) != per+2 {
			return nil, fmt.Errorf("%s/%s: catalog %+v, want %d skills", ws.Namespace, ws.Name, ws.Status.Catalog, per+2)
		}
	}
	return &Phase{Name: fmt.Sprintf("add %d skills", per*len(f.Namespaces)), N: len(f.Workspaces), Duration: time.Since(start),
		Writes: f.e.Writes.Snapshot().Since(before)}, nil
}

// MemoryResult compares the process's memory with the objects the manager caches.
type MemoryResult struct {
	Workspaces, Skills, ConfigMaps int
	// CachedBytes is the JSON size of the objects the manager caches in full
	// (Skills, Templates, Extensions, Workspaces); ConfigMaps and Namespaces
	// are cached as metadata only and counted in MetadataBytes.
	CachedBytes, MetadataBytes int64
	HeapInuse, HeapAlloc, Sys  uint64
	RSS, PeakRSS               int64
	ProfilePath                string
}

// Memory measures heap (after GC) and RSS of this process, which runs the
// manager, against the size of the objects it caches; it writes a heap
// profile to profilePath when set.
func Memory(ctx context.Context, e *Env, profilePath string) (*MemoryResult, error) {
	r := &MemoryResult{ProfilePath: profilePath}
	// Measure first: the lists below allocate in this process too. Peak RSS
	// (VmHWM) covers the whole run, manager and harness clients alike.
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapInuse, r.HeapAlloc, r.Sys = ms.HeapInuse, ms.HeapAlloc, ms.Sys
	r.RSS, r.PeakRSS = procStatus("VmRSS"), procStatus("VmHWM")
	if profilePath != "" {
		fh, err := os.Create(profilePath)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		if err := pprof.Lookup("heap").WriteTo(fh, 0); err != nil {
			return nil, err
		}
	}

	// The manager caches whole Skills, Workspaces, Templates and Extensions.
	for _, kind := range []struct {
		list  client.ObjectList
		count *int // where the report keeps how many there are, if it does
	}{
		{&v1alpha1.SkillList{}, &r.Skills},
		{&v1alpha1.WorkspaceList{}, &r.Workspaces},
		{&v1alpha1.TemplateList{}, nil},
		{&v1alpha1.ExtensionList{}, nil},
	} {
		n, size, err := listJSONSize(ctx, e.Client, kind.list)
		if err != nil {
			return nil, err
		}
		r.CachedBytes += size
		if kind.count != nil {
			*kind.count = n
		}
	}
	// ConfigMaps and Namespaces are cached as metadata only: list them so.
	for _, kind := range []string{"ConfigMapList", "NamespaceList"} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
		if err := e.Client.List(ctx, list); err != nil {
			return nil, err
		}
		for i := range list.Items {
			r.MetadataBytes += jsonSize(&list.Items[i].ObjectMeta)
		}
		if kind == "ConfigMapList" {
			r.ConfigMaps = len(list.Items)
		}
	}
	return r, nil
}

// listJSONSize lists every object of list's kind and returns how many there
// are and the sum of their JSON sizes.
func listJSONSize(ctx context.Context, c client.Client, list client.ObjectList) (int, int64, error) {
	if err := c.List(ctx, list); err != nil {
		return 0, 0, err
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return 0, 0, err
	}
	var size int64
	for _, item := range items {
		size += jsonSize(item)
	}
	return len(items), size, nil
}

func jsonSize(v any) int64 {
	b, _ := json.Marshal(v)
	return int64(len(b))
}

// procStatus reads a kB field of /proc/self/status, in bytes; -1 if unknown.
func procStatus(field string) int64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return -1
		}
		return kb * 1024
	}
	return -1
}

// CPUTimes is the CPU time used so far by this process (the manager, the
// harness's clients and tracker) and by its child processes (kube-apiserver
// and etcd), from /proc. It tells which side a phase was bound by.
type CPUTimes struct{ Self, Server time.Duration }

// Sub is the CPU time between an earlier reading and this one.
func (c CPUTimes) Sub(earlier CPUTimes) CPUTimes {
	return CPUTimes{Self: c.Self - earlier.Self, Server: c.Server - earlier.Server}
}

// clockTick is USER_HZ, 100 on Linux.
const clockTick = 10 * time.Millisecond

// ReadCPU reads the CPU times; zero when /proc is not available.
func ReadCPU() CPUTimes {
	var c CPUTimes
	self := os.Getpid()
	c.Self, _ = procCPU("/proc/self/stat")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		d, ppid := procCPU(filepath.Join("/proc", e.Name(), "stat"))
		if ppid == self {
			c.Server += d
		}
	}
	return c
}

// procCPU returns utime+stime and the parent pid from a /proc/PID/stat file.
func procCPU(path string) (time.Duration, int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	// The command name is in parentheses and may hold spaces: fields start
	// after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, 0
	}
	ppid, _ := strconv.Atoi(f[1])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick, ppid
}
