/**
 * The embedded Kubernetes API server: public entry points.
 *
 * - start one: `startApiServer({ clock })` (server.ts) → `ApiServer`
 *   (url, caPem, token, kubeconfig(), control, core, close());
 * - drive it from tests: `server.control` (control.ts);
 * - extend it: `server.core` (core.ts) — registry, admission chain,
 *   `customResourceStrategy`, routes, formatters — or pass `plugins` to
 *   `startApiServer` to extend it before the first request.
 * Schemas, printing and encodings: schema/ (CRD validation, custom resource
 * validation/pruning/defaulting) · table/ (server-side printing) · openapi/
 * (OpenAPI v2/v3, field validation) · protobuf/ (protobuf request bodies).
 * Module map: resources.ts (registry) · resource-def.ts (types) · storage.ts ·
 * operations.ts (create/update pipeline) · patch.ts · apply.ts · delete.ts ·
 * scale.ts · list.ts · watch.ts · discovery.ts · handler.ts · errors.ts ·
 * strategies/* · crd-controller.ts · namespace-lifecycle.ts · admission-setup.ts
 * (built-in admission plug-ins, admission webhooks, eviction, binding).
 */
export { startApiServer, ADMIN_USER, type ApiServer, type ApiServerOptions, type ApiServerPlugin } from './server.ts';
export { ApiServerCore, SYSTEM_USER, INITIAL_NAMESPACES } from './core.ts';
export type { ApiServerHost, Route, ResponseFormatter } from './extension-host.ts';
export { ApiServerControl, type ForbiddenRequest, type FaultSpec, type FaultHandle, type RequestCount, type RequestFilter, type WebhookCallCount } from './control.ts';
export type { WebhookCall } from './admission-webhooks.ts';
export { ResourceRegistry } from './resources.ts';
export type {
  GroupVersionKind,
  RequestContext,
  ResourceConversion,
  ResourceDef,
  ResourceStrategy,
  ScaleSpec,
  StrategyContext,
  SubresourceHandler,
  SubresourceRequest,
  SubresourceResponse,
  UserInfo,
} from './resource-def.ts';
export { apiVersionOf, storageKey } from './resource-def.ts';
export { AdmissionChain, type AdmissionAttributes, type AdmissionDecision, type AdmissionOperation, type AdmissionPlugin, type ReinvocationContext } from './admission.ts';
export type { CustomResourceStrategyFactory } from './crd-controller.ts';
export { customResourceDefs } from './crd-controller.ts';
export { ObjectOperations, type WriteOutcome, type CommitOptions } from './operations.ts';
export { deleteObject, deleteCollection, parseDeleteOptions, type DeleteOptions, type DeleteOutcome } from './delete.ts';
export { patchObject, supportedPatchTypes, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH } from './patch.ts';
export { getScale, updateScale, scaleOf, SCALE_KIND } from './scale.ts';
export { ObjectStore, type StoreEvent, type WatchEventType } from './storage.ts';
export { BINDING_KIND, BindingHandler } from './binding.ts';
export { EVICTION_KIND, EvictionHandler } from './eviction.ts';
export { AdmissionWebhooks, MUTATING_WEBHOOK_PLUGIN, VALIDATING_WEBHOOK_PLUGIN } from './admission-webhooks.ts';
export { webhooksOf, validateWebhookConfiguration, type WebhookAccessor, type ServiceReference } from './webhook-configuration.ts';
export { ADMISSION_V1, ADMISSION_V1BETA1 } from './admission-review.ts';
export { Authorizer, isPrivileged } from './authorization.ts';
export { forbiddenStatus, type AuthorizationAttributes, type Decision } from './authorization-attributes.ts';
export { ANONYMOUS } from './authentication.ts';
export { API_AUDIENCE, TOKEN_REQUEST_KIND } from './service-account-tokens.ts';
export * as apiErrors from './errors.ts';
export type { Status, Result } from './errors.ts';
export { createCertificateAuthority, issueServingCertificate, generateServingCertificate, type CertificateAuthority, type ServingCertificate } from './certs.ts';
export { renderKubeconfig } from './kubeconfig.ts';
export { SERVER_VERSION } from './discovery.ts';
export { installCustomResourceSchemas, schemaStrategy, versionSchema } from './schema/custom-resource-schema.ts';
export { validateCustomResourceDefinition, validateCustomResourceDefinitionUpdate } from './schema/crd-validation.ts';
export { acceptNames, type NamesVerdict } from './crd-names.ts';
export { installTablePrinting, TablePrinting, tableVersion } from './table/table.ts';
export { printerFor } from './table/printers-workloads.ts';
export { customResourcePrinter } from './table/custom-columns.ts';
export type { Cell, Column, Printer } from './table/columns.ts';
export { installOpenApi, OpenApiDocuments } from './openapi/openapi.ts';
export { builtinUnknownFields } from './openapi/field-validation.ts';
export { decodeKubernetesProtobuf, PROTOBUF_MEDIA_TYPE } from './protobuf/decode.ts';
