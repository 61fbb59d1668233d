import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { StaffUser } from '../../entities/staff-user.entity';
import { Team } from '../../entities/team.entity';
import { TEAM_ROLES, TeamMember, type TeamRole } from '../../entities/team-member.entity';
import type { StaffCaller } from '../../platform/caller';
import { errors, fieldError } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { flushUnique } from '../../db/flush-unique';
import { executeNamed } from '../../db/bound-statement';
import { namedStatement } from '../../platform/named-sql';

/** Whether the would-be parent exists, and whether it is the team itself or sits below it (walking up from the parent). */
const PARENT_CHECK = namedStatement<{ parent_id: string; team_id: string }>(
  `with recursive up(id) as (
     select :parent_id::uuid
     union select t.parent_team_id from teams t join up on t.id = up.id where t.parent_team_id is not null)
   select exists (select 1 from up where id = :team_id::uuid) as loop, exists (select 1 from teams where id = :parent_id::uuid) as found`,
);

/**
 * Teams of staff users. A team may sit under a parent team; its lead sees the customers of
 * every team below it, members only their own team's (their `data_scope` being `team`).
 * Membership is what sets a user's `team_ids`. Every change is audited.
 */
export const TeamMemberSchema = z.object({
  user_id: z.uuid(),
  role: z.enum(TEAM_ROLES),
  created_at: z.iso.datetime(),
});

export const TeamSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  parent_team_id: z.uuid().nullable(),
  members: z.array(TeamMemberSchema),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type TeamView = z.output<typeof TeamSchema>;

export const TeamName = z.string().trim().min(1).max(100);

function memberView(m: TeamMember): z.output<typeof TeamMemberSchema> {
  return { user_id: m.user.id, role: m.role, created_at: m.createdAt.toISOString() };
}

export function teamView(t: Team, members: readonly TeamMember[]): TeamView {
  return {
    id: t.id,
    name: t.name,
    parent_team_id: t.parentTeam?.id ?? null,
    members: members
      .filter((m) => m.team.id === t.id)
      .map(memberView)
      .sort((a, b) => a.user_id.localeCompare(b.user_id)),
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

export async function teamViews(em: EntityManager, teams: readonly Team[]): Promise<TeamView[]> {
  const members = teams.length ? await em.find(TeamMember, { team: { $in: teams.map((t) => t.id) } }) : [];
  return teams.map((t) => teamView(t, members));
}

export async function teamViewOf(em: EntityManager, teamId: string): Promise<TeamView> {
  const team = await em.findOne(Team, teamId);
  if (!team) throw errors.notFound('Team');
  return (await teamViews(em, [team]))[0]!;
}

export async function createTeam(
  em: EntityManager,
  actor: StaffCaller,
  input: { name: string; parent_team_id?: string | null | undefined },
): Promise<TeamView> {
  const parent = input.parent_team_id ? await em.findOne(Team, input.parent_team_id) : null;
  if (input.parent_team_id && !parent) throw fieldError('body', ['parent_team_id'], 'No such team');
  const team = em.create(Team, { name: input.name, parentTeam: parent });
  const view = teamView(team, []);
  recordAudit(em, actor, { action: 'team.created', entityType: 'team', entityId: team.id, after: view });
  await flushUnique(em, () => errors.conflict('TEAM_NAME_TAKEN', 'A team with this name exists'));
  return view;
}

export async function updateTeam(
  em: EntityManager,
  actor: StaffCaller,
  teamId: string,
  input: { name?: string | undefined; parent_team_id?: string | null | undefined },
): Promise<TeamView> {
  return em.transactional(async (tx) => {
    const team = await tx.findOne(Team, teamId);
    if (!team) throw errors.notFound('Team');
    const before = (await teamViews(tx, [team]))[0]!;
    if (input.name !== undefined) team.name = input.name;
    if (input.parent_team_id !== undefined) {
      if (input.parent_team_id === null) team.parentTeam = null;
      else {
        // A team cannot sit under itself or under a team below it: the tree would become a loop.
        const [row] = await executeNamed<{ loop: boolean; found: boolean }>(
          tx,
          PARENT_CHECK.bind({ parent_id: input.parent_team_id, team_id: team.id }),
        );
        const found = row?.found;
        if (!found) throw fieldError('body', ['parent_team_id'], 'No such team');
        if (row?.loop) throw fieldError('body', ['parent_team_id'], 'A team cannot sit under itself or a team below it');
        team.parentTeam = tx.getReference(Team, input.parent_team_id, { wrapped: true });
      }
    }
    team.updatedAt = new Date();
    const after = (await teamViews(tx, [team]))[0]!;
    recordAudit(tx, actor, { action: 'team.updated', entityType: 'team', entityId: team.id, before, after });
    await flushUnique(tx, () => errors.conflict('TEAM_NAME_TAKEN', 'A team with this name exists'));
    return after;
  });
}

/** Deleting a team that still has teams under it is refused; its customers become team-less. */
export async function deleteTeam(em: EntityManager, actor: StaffCaller, teamId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const team = await tx.findOne(Team, teamId);
    if (!team) throw errors.notFound('Team');
    if ((await tx.count(Team, { parentTeam: team.id })) > 0)
      throw errors.conflict('TEAM_HAS_CHILDREN', 'Move or delete the teams under this team first');
    const before = (await teamViews(tx, [team]))[0]!;
    recordAudit(tx, actor, { action: 'team.deleted', entityType: 'team', entityId: team.id, before });
    tx.remove(team);
  });
}

/** PUT membership: adds the user to the team, or changes its role there. */
export async function setTeamMember(
  em: EntityManager,
  actor: StaffCaller,
  teamId: string,
  userId: string,
  role: TeamRole,
): Promise<TeamView> {
  return em.transactional(async (tx) => {
    const team = await tx.findOne(Team, teamId);
    if (!team) throw errors.notFound('Team');
    const user = await tx.findOne(StaffUser, userId);
    if (!user) throw errors.notFound('Staff user');
    const before = (await teamViews(tx, [team]))[0]!;
    const existing = await tx.findOne(TeamMember, { team: teamId, user: userId });
    if (existing) existing.role = role;
    else tx.create(TeamMember, { team, user, role, createdAt: new Date() });
    await tx.flush();
    const after = (await teamViews(tx, [team]))[0]!;
    recordAudit(tx, actor, {
      action: 'team.member_set',
      entityType: 'team',
      entityId: team.id,
      before: { user_id: userId, role: existing ? before.members.find((m) => m.user_id === userId)?.role : null },
      after: { user_id: userId, role },
    });
    return after;
  });
}

export async function removeTeamMember(em: EntityManager, actor: StaffCaller, teamId: string, userId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const member = await tx.findOne(TeamMember, { team: teamId, user: userId });
    if (!member) throw errors.notFound('Team member');
    recordAudit(tx, actor, {
      action: 'team.member_removed',
      entityType: 'team',
      entityId: teamId,
      before: { user_id: userId, role: member.role },
    });
    tx.remove(member);
  });
}
