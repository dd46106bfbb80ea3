// Original file: proto/svc/v1/admin.proto


export interface ListStarsRequest {
}

export interface ListStarsRequest__Output {
}
