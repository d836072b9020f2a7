package testenv

import (
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ControllerMetric sums the values (counter or gauge) of the samples of a
// metric in controller-runtime's registry whose label has the given value,
// e.g. ("controller_runtime_active_workers", "controller", "workspace"). It
// is -1 when the registry cannot be read.
func ControllerMetric(metric, label, value string) float64 {
	return sumMetric(metric, label, value)
}

// Metric sums the values (counter or gauge) of every sample of a metric in
// controller-runtime's registry, where a manager running in the test
// process registers Loadout's own, such as
// loadout_configmap_adoptions_total. It is 0 when nothing recorded the
// metric and -1 when the registry cannot be read.
func Metric(metric string) float64 {
	return sumMetric(metric, "", "")
}

// sumMetric sums metric's samples whose label has value; label "" takes
// every sample.
func sumMetric(metric, label, value string) float64 {
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
			match := label == ""
			for _, l := range m.GetLabel() {
				match = match || l.GetName() == label && l.GetValue() == value
			}
			if match {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}
