package testenv

import (
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ControllerMetric sums the values (counter or gauge) of the samples of a
// metric in controller-runtime's registry whose label has the given value,
// e.g. ("controller_runtime_active_workers", "controller", "workspace"). It
// is -1 when the registry cannot be read.
func ControllerMetric(metric, label, value string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return -1
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return sum
}
