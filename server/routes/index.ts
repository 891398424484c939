import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { configurationRoutes } from './configuration.js';
import { deviceRoutes } from './devices.js';
import { ruleRoutes } from './rules.js';
import { userRoutes } from './users.js';

export function v0Routes(app: FastifyInstance, ctx: ServiceContext): void {
  userRoutes(app, ctx);
  deviceRoutes(app, ctx);
  ruleRoutes(app, ctx);
  configurationRoutes(app, ctx);
}
