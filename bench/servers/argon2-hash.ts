import { createServer } from 'node:http';
import argon2 = require('@node-rs/argon2');
import { listenAndAnnounce } from './announce';

/**
 * The floor for a password login: bare node:http answering POST /hash with one argon2id
 * hash of the parameters the service uses (src/domain/identity/passwords.ts), and nothing
 * else. Verifying costs what hashing costs, so its rate at a given concurrency is the most
 * logins per second this machine could do if a login were nothing but its password check.
 * The HTTP around it costs well under a percent of one hash.
 */
/** The package's Algorithm is a const enum, which isolatedModules builds cannot read at run time. */
const ARGON2ID: argon2.Algorithm.Argon2id = 2;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 };
const PASSWORD = 'bench-password-of-typical-length';

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/hash') {
    res.writeHead(404).end();
    return;
  }
  req.resume();
  req.once('end', () => {
    argon2.hash(PASSWORD, OPTIONS).then(
      (hash) => {
        const body = Buffer.from(JSON.stringify({ length: hash.length }));
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length }).end(body);
      },
      (err: unknown) => {
        res.writeHead(500).end(String(err));
      },
    );
  });
});

listenAndAnnounce(server);
