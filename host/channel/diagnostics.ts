// What the channel reports through onDiagnostic: its own events (subsystem
// host.channel) and the log lines a bridge forwards when asked (a
// `diagnostic` frame: subsystem bridge.<its subsystem>, source bridge).
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/index.ts';
import type { DiagnosticFrame } from '../../protocol/v1/index.ts';

export function channelDiagnostic(
  level: HarnessV1Diagnostic['level'],
  message: string,
  attrs?: Record<string, unknown>,
): HarnessV1Diagnostic {
  return {
    level,
    message,
    subsystem: 'host.channel',
    kind: 'event',
    ...(attrs ? { attrs } : {}),
    timestamp: Date.now(),
  };
}

export function bridgeDiagnostic(frame: DiagnosticFrame): HarnessV1Diagnostic {
  return {
    level: frame.level,
    message: frame.message,
    subsystem: `bridge.${frame.subsystem}`,
    kind: 'log',
    source: 'bridge',
    ...(frame.attrs ? { attrs: frame.attrs } : {}),
    timestamp: frame.ts,
  };
}
