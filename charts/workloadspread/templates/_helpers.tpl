{{/*
Names are fixed, not derived from the release: the manager finds its webhook configurations,
Service, certificate Secret, Lease and whitelist ConfigMap by these names (src/cli/install-values.ts
INSTALL_NAMES), so there is one install per cluster.
*/}}

{{- define "workloadspread.namespace" -}}
{{- default .Release.Namespace .Values.namespace.name -}}
{{- end }}

{{- define "workloadspread.labels" -}}
app.kubernetes.io/name: workloadspread
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "workloadspread.selectorLabels" -}}
app.kubernetes.io/name: workloadspread
app.kubernetes.io/component: manager
{{- end }}

{{- /* The metadata lines spliced into each CRD file after its top-level `metadata:` (crds.yaml). */ -}}
{{- define "workloadspread.crdMetadata" -}}
{{ printf "\nmetadata:" }}
{{- if .Values.crds.keep }}
  annotations:
    helm.sh/resource-policy: keep
{{- end }}
  labels:
    {{- include "workloadspread.labels" . | nindent 4 }}
{{ end }}
