/** Self-signed certificates for TLS tests, made with the `openssl` CLI (installed by .ci/run). */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Writes key.pem and cert.pem (valid for 127.0.0.1, one day) into `dir`. */
export function writeSelfSignedCertificate(dir: string): { keyPath: string; certPath: string } {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
      ...['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyPath, '-out', certPath],
    ],
    { stdio: 'ignore' },
  );
  return { keyPath, certPath };
}
