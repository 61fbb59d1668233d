import { loadConfig } from '../../src/config/config';
import { serviceAddress } from '../../src/demo/seed-demo';

test('when the service runs on another PORT or HOST, then the demo names that address, not :8000', () => {
  expect(serviceAddress(loadConfig({ PORT: '8411' }))).toBe('http://localhost:8411');
  expect(serviceAddress(loadConfig({}))).toBe('http://localhost:8000');
  expect(serviceAddress(loadConfig({ HOST: '127.0.0.2', PORT: '9000' }))).toBe('http://127.0.0.2:9000');
  expect(serviceAddress(loadConfig({ HOST: '::1' }))).toBe('http://[::1]:8000');
});
