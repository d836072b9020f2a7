package main

import (
	"fmt"
	"io"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/internal/jsonindent"
)

// configMap is a context ConfigMap as printed: the shape the controller
// applies (workspace.ContextConfigMap), so the output has only the fields the
// controller sets and no creationTimestamp: null noise.
type configMap = *corev1ac.ConfigMapApplyConfiguration

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
		var v any = map[string]any{"apiVersion": "v1", "kind": "List", "items": cms}
		if len(cms) == 1 {
			v = cms[0]
		}
		// What a json.Encoder without HTML escaping, indented by two
		// spaces, writes; in less time on contexts of long strings.
		b, err := jsonindent.Encode(v, "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("--output %q: must be %s or %s", format, outputYAML, outputJSON)
}
