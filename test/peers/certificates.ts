import selfsigned from 'selfsigned';

/** A CA made for a test run, and a server certificate it signed. */
export interface TestCertificate {
  /** PEM of the CA: what a client is told to trust. */
  ca: string;
  key: string;
  cert: string;
}

/**
 * A server certificate for `names` (DNS) and `ips`, signed by a fresh CA, for the
 * HTTPS receivers of the tests and benchmarks. RSA: selfsigned 5 cannot sign with
 * an EC key.
 */
export async function makeCertificate(opts: {
  names?: string[];
  ips?: string[];
  /** The server certificate's validity (selfsigned's default: from now, for a year). */
  notBefore?: Date;
  notAfter?: Date;
}): Promise<TestCertificate> {
  const ca = await selfsigned.generate([{ name: 'commonName', value: 'svc test CA' }], {
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const names = opts.names ?? [];
  const ips = opts.ips ?? [];
  const leaf = await selfsigned.generate([{ name: 'commonName', value: names[0] ?? ips[0] ?? 'localhost' }], {
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    ...(opts.notBefore ? { notBeforeDate: opts.notBefore } : {}),
    ...(opts.notAfter ? { notAfterDate: opts.notAfter } : {}),
    extensions: [
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          ...names.map((value) => ({ type: 2 as const, value })),
          ...ips.map((ip) => ({ type: 7 as const, ip })),
        ],
      },
    ],
  });
  return { ca: ca.cert, key: leaf.private, cert: leaf.cert };
}
