{{/* The release's full name, at most 63 characters (a DNS label). */}}
{{- define "toolgate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object; "toolgate.selector" with a component are a Deployment's selector. */}}
{{- define "toolgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "toolgate.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "toolgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "toolgate.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "toolgate.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Where the Secrets are mounted: files, never argv or environment values. */}}
{{- define "toolgate.codecKeyFile" -}}/etc/toolgate/codec/keys{{- end -}}
{{- define "toolgate.tokenFile" -}}/etc/toolgate/token/token{{- end -}}

{{/* TEMPORAL_* connection settings of a Temporal client (worker, MCP front). */}}
{{- define "toolgate.temporalEnv" -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TOOLGATE_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
{{- if or .Values.temporal.tls.enabled .Values.temporal.tls.caSecret .Values.temporal.tls.clientCertSecret .Values.temporal.apiKey.secretName }}
- name: TEMPORAL_TLS
  value: "true"
{{- end }}
{{- with .Values.temporal.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if .Values.temporal.tls.caSecret }}
- name: TEMPORAL_TLS_CA_PATH
  value: /etc/toolgate/temporal-ca/ca.crt
{{- end }}
{{- if .Values.temporal.tls.clientCertSecret }}
- name: TEMPORAL_TLS_CERT_PATH
  value: /etc/toolgate/temporal-client/tls.crt
- name: TEMPORAL_TLS_KEY_PATH
  value: /etc/toolgate/temporal-client/tls.key
{{- end }}
{{- if .Values.temporal.apiKey.secretName }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.temporal.apiKey.secretName }}
      key: {{ .Values.temporal.apiKey.key }}
{{- end }}
{{- include "toolgate.commonEnv" . }}
{{- end -}}

{{/* Logging and the codec key file, for every process. */}}
{{- define "toolgate.commonEnv" -}}
{{- if .Values.codecKeys.secretName }}
- name: TOOLGATE_CODEC_KEY
  value: {{ include "toolgate.codecKeyFile" . }}
{{- end }}
- name: TOOLGATE_LOG_FORMAT
  value: {{ .Values.logFormat | quote }}
- name: TOOLGATE_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end -}}

{{/* Volume mounts and volumes of a Temporal client's Secrets and the codec keys. */}}
{{- define "toolgate.secretMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if .Values.codecKeys.secretName }}
- name: codec-keys
  mountPath: /etc/toolgate/codec
  readOnly: true
{{- end }}
{{- if and .temporal .Values.temporal.tls.caSecret }}
- name: temporal-ca
  mountPath: /etc/toolgate/temporal-ca
  readOnly: true
{{- end }}
{{- if and .temporal .Values.temporal.tls.clientCertSecret }}
- name: temporal-client
  mountPath: /etc/toolgate/temporal-client
  readOnly: true
{{- end }}
{{- end -}}

{{- define "toolgate.secretVolumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- if .Values.codecKeys.secretName }}
- name: codec-keys
  secret:
    secretName: {{ .Values.codecKeys.secretName }}
    defaultMode: 0440
    items:
      - key: {{ .Values.codecKeys.key }}
        path: keys
{{- end }}
{{- if and .temporal .Values.temporal.tls.caSecret }}
- name: temporal-ca
  secret:
    secretName: {{ .Values.temporal.tls.caSecret }}
    defaultMode: 0440
    items:
      - key: ca.crt
        path: ca.crt
{{- end }}
{{- if and .temporal .Values.temporal.tls.clientCertSecret }}
- name: temporal-client
  secret:
    secretName: {{ .Values.temporal.tls.clientCertSecret }}
    defaultMode: 0440
{{- end }}
{{- end -}}
