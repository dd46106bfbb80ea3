// Original file: proto/svc/v1/admin.proto


export interface HealthRequest {
}

export interface HealthRequest__Output {
}
