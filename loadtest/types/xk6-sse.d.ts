// Types for the xk6-sse extension (github.com/phymbert/xk6-sse), which sse.js needs: k6 itself has
// no SSE client. Build k6 with it: `xk6 build --with github.com/phymbert/xk6-sse`.
declare module 'k6/x/sse' {
  export interface SSEParams {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    tags?: Record<string, string>;
  }
  export interface SSEEvent {
    id: string;
    name: string;
    data: string;
  }
  export interface SSEError {
    error(): string;
  }
  export interface SSEClient {
    on(event: 'open', callback: () => void): void;
    on(event: 'event', callback: (event: SSEEvent) => void): void;
    on(event: 'error', callback: (error: SSEError) => void): void;
    close(): void;
  }
  export interface SSEResponse {
    status: number;
    error?: string;
  }
  const sse: {
    open(url: string, params: SSEParams, callback: (client: SSEClient) => void): SSEResponse;
  };
  export default sse;
}
