import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Encryption at rest for the few secrets the service must use in clear (webhook signing
 * secrets: HMAC needs the key itself). AES-256-GCM with a key from SWITCHBOARD_ENCRYPTION_KEY
 * (32 bytes, base64) or, for a single machine, a key file created in the data directory (0600),
 * never in the database. Every process sharing a database needs the same key.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromKey(base64: string): SecretBox {
    const key = Buffer.from(base64, 'base64');
    if (key.length !== 32) throw new Error('SWITCHBOARD_ENCRYPTION_KEY must be 32 bytes, base64');
    return new SecretBox(key);
  }

  /** The key from `envKey`, else from `<dataDir>/encryption-key`, created on first use. */
  static load(envKey: string | undefined, dataDir: string): SecretBox {
    if (envKey) return SecretBox.fromKey(envKey);
    const file = path.join(dataDir, 'encryption-key');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    }
    return SecretBox.fromKey(fs.readFileSync(file, 'utf8').trim());
  }

  /** HMAC-SHA256 of `text` under a key derived from this box's key (base64url). */
  mac(purpose: string, text: string): string {
    const key = crypto.createHmac('sha256', this.key).update(`mac:${purpose}`).digest();
    return crypto.createHmac('sha256', key).update(text).digest('base64url');
  }

  /** nonce (12) ‖ tag (16) ‖ ciphertext. */
  seal(plain: string): Buffer {
    const nonce = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([nonce, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer): string {
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
  }
}
