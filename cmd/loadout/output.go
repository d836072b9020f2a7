package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/resources"
)

// configMap is the published ConfigMap as printed: only the fields the
// controller sets, so the output has no creationTimestamp: null noise.
type configMap struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   configMapMeta     `json:"metadata"`
	Data       map[string]string `json:"data"`
}

type configMapMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// newConfigMap is the ConfigMap the controller applies for a Workspace.
func newConfigMap(name, namespace, workspace string, r *resources.Result) configMap {
	return configMap{
		APIVersion: "v1",
		Kind:       "ConfigMap",
		Metadata: configMapMeta{
			Name:        name,
			Namespace:   namespace,
			Labels:      map[string]string{v1alpha1.WorkspaceLabel: workspace},
			Annotations: map[string]string{v1alpha1.ContextHashAnnotation: r.Hash},
		},
		Data: r.Data,
	}
}

// Output formats of preview.
const (
	outputYAML = "yaml"
	outputJSON = "json"
)

// writeConfigMaps prints ConfigMaps deterministically: YAML documents
// separated by "---", or JSON (one object, or a v1 List for several).
func writeConfigMaps(w io.Writer, format string, cms []configMap) error {
	switch format {
	case outputYAML:
		for i, cm := range cms {
			b, err := yaml.Marshal(cm)
			if err != nil {
				return err
			}
			if i > 0 {
				fmt.Fprintln(w, "---")
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	case outputJSON:
		var v any = cms
		if len(cms) == 1 {
			v = cms[0]
		} else {
			v = map[string]any{"apiVersion": "v1", "kind": "List", "items": cms}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	return fmt.Errorf("--output %q: must be %s or %s", format, outputYAML, outputJSON)
}
