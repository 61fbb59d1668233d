import { recogniseDocument } from '../../src/domain/compliance/file-kind';
import { levelReached } from '../../src/domain/compliance/documents';
import { cleanFileName } from '../../src/api/http/multipart-upload';
import type { LevelTerms } from '../../src/domain/compliance/verification-levels';

const PNG_HEAD = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13];

describe('recognising a document by its first bytes', () => {
  test.each([
    ['a PDF', Buffer.from('%PDF-1.4\n...'), 'application/pdf'],
    ['a JPEG', Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0, 0x43]), 'image/jpeg'],
    ['a PNG with its IHDR chunk', Buffer.concat([Buffer.from(PNG_HEAD), Buffer.from('IHDR')]), 'image/png'],
    ['the PNG signature alone', Buffer.from(PNG_HEAD.slice(0, 8)), undefined],
    ['the PNG signature and another chunk', Buffer.concat([Buffer.from(PNG_HEAD), Buffer.from('tEXt')]), undefined],
    ['a GIF', Buffer.from('GIF89a'), undefined],
    ['a ZIP (a .docx)', Buffer.from([0x50, 0x4b, 0x03, 0x04]), undefined],
    ['text naming PDF later', Buffer.from(' %PDF-1.4'), undefined],
    ['two bytes of a JPEG', Buffer.from([0xff, 0xd8]), undefined],
    ['nothing', Buffer.alloc(0), undefined],
  ])('when the file is %s, then it is %s', (_what, head, expected) => {
    expect(recogniseDocument(head)).toBe(expected);
  });
});

describe('cleaning a file name', () => {
  test.each([
    ['passport.pdf', 'passport.pdf'],
    ['C:\\Users\\anna\\passport.pdf', 'passport.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['bill\u202Efdp.exe', 'billfdp.exe'],
    ['line\r\nbreak.png', 'linebreak.png'],
    ['', 'document'],
    [undefined, 'document'],
    ['x'.repeat(300), 'x'.repeat(255)],
  ])('when the client names it %j, then it is kept as %j', (raw, expected) => {
    expect(cleanFileName(raw)).toBe(expected);
  });
});

describe('the level approved documents reach', () => {
  const level = (n: number, required: LevelTerms['requiredDocuments']): LevelTerms => ({
    level: n,
    requiredDocuments: required,
    canTrade: true,
    canWithdraw: true,
    maxDepositPerDay: null,
    maxWithdrawalPerDay: null,
    maxWithdrawalPerMonth: null,
    updatedAt: new Date(),
  });
  const levels = [level(0, []), level(1, ['identity']), level(2, ['identity', 'address']), level(3, [])];

  test('when a level requires documents, then approving all of them reaches it, and the highest such level wins', () => {
    expect(levelReached(levels, new Set())).toBe(0);
    expect(levelReached(levels, new Set(['address']))).toBe(0);
    expect(levelReached(levels, new Set(['identity']))).toBe(1);
    expect(levelReached(levels, new Set(['identity', 'address', 'selfie']))).toBe(2);
  });

  test('when a level requires nothing, then no approval reaches it (staff set it)', () => {
    expect(levelReached(levels, new Set(['identity', 'address', 'selfie', 'payment_method']))).toBe(2);
    expect(levelReached([level(0, []), level(1, []), level(2, []), level(3, [])], new Set(['identity']))).toBe(0);
  });
});
