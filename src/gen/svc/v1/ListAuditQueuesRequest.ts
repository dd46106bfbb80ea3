// Original file: proto/svc/v1/admin.proto


export interface ListAuditQueuesRequest {
}

export interface ListAuditQueuesRequest__Output {
}
